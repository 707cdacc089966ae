"""A recording carries its recipe: replay, reproduce and resume need no flags, a miss names the
recorded model, and `migrate` brings files made before recipes forward."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from offline_scorer.cassette.digest import content_digest
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.cassette.store.frames import encode_header
from tests.conftest import FIXTURES
from tests.test_cli import assert_clean_error, run_cli

CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"
DATA = FIXTURES / "pairs.jsonl"
GOLDEN = FIXTURES / "golden" / "results.jsonl"


def _env(**extra: str) -> dict[str, str]:
    """The tests' environment with the registry's default model moved to another judge, so a
    run that takes the recording's model cannot have got it from the default."""
    return {**os.environ, "OFFLINE_SCORER_MODEL": "qwen2.5-coder-1.5b", **extra}


def _format_2(path: Path) -> Path:
    """The golden file as offline-scorer 0.4 wrote it: no header, lines of format 2."""
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()[1:]
    old = path / "format2.jsonl"
    old.write_text(
        "".join(line.replace('{"format":3,', '{"format":2,', 1) + "\n" for line in lines),
        encoding="utf-8",
    )
    return old


def test_the_fixture_cassette_replays_with_no_model_flag(tmp_path):
    out = tmp_path / "r.jsonl"
    proc = run_cli(
        "eval", str(DATA), "--out", str(out), "--cassette", str(CASSETTE), "--record-mode",
        "replay", "--quiet", env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == GOLDEN.read_bytes()
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["recipe"]["model"] == "smollm2-135m"
    assert header["recipe"]["options"]["splitting"] == 1


def test_an_option_flag_wins_over_the_recipe(tmp_path):
    out = tmp_path / "r.jsonl"
    proc = run_cli(
        "eval", str(DATA), "--out", str(out), "--cassette", str(CASSETTE), "--record-mode",
        "replay", "--quiet", "--max-questions", "3", env=_env(),
    )  # fmt: skip
    assert proc.returncode == 1  # every item misses: the cassette asked for 10 questions
    header, first = (json.loads(line) for line in out.read_text().splitlines()[:2])
    assert header["recipe"]["options"]["max_questions"] == 3
    assert header["recipe"]["model"] == "smollm2-135m"
    assert first["error"]["type"] == "CassetteMissError"


def test_a_miss_against_another_model_names_the_recorded_one(tmp_path):
    out = tmp_path / "r.jsonl"
    proc = run_cli(
        "eval", str(DATA), "--out", str(out), "--cassette", str(CASSETTE), "--record-mode",
        "replay", "--quiet", "--model", "qwen2.5-coder-1.5b",
    )  # fmt: skip
    assert proc.returncode == 1
    message = json.loads(out.read_text().splitlines()[1])["error"]["message"]
    assert f"{CASSETTE} was recorded with model 'smollm2-135m', not this one" in message
    assert "replay with --model smollm2-135m" in message


def _without_recipe(path: Path) -> Path:
    """The fixture recording as offline-scorer 0.4 wrote it: the same frames, a header with no
    recipe (the fixture cassette was written by 0.4.0 and given its recipe by `migrate`)."""
    with CassetteFile(CASSETTE, create=False) as cassette:
        writer, header_end = cassette.writer, cassette.header_end
    assert writer.startswith("offline-scorer/0.4.")
    old = path / "old.oscas"
    old.write_bytes(encode_header(writer) + CASSETTE.read_bytes()[header_end:])
    return old


def test_a_cassette_without_a_recipe_replays_after_one_migrate_command(tmp_path):
    old = _without_recipe(tmp_path)
    out = tmp_path / "r.jsonl"
    args = ("eval", str(DATA), "--out", str(out), "--cassette", str(old), "--record-mode")
    proc = run_cli(*args, "replay", "--quiet", env=_env())
    # today's default keeps "before 9 a.m. or after 6 p.m." in one sentence; 0.4 cut it
    assert proc.returncode == 1
    assert f"note: replaying with model 'smollm2-135m', the one {old} holds" in proc.stderr.decode()
    lines = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    missed = [line["id"] for line in lines if line["error"]]
    assert "05-watering-ban" in missed and len(missed) < len(lines)

    before = content_digest(old)
    migrated = run_cli("migrate", "cassette", str(old), env=_env())
    assert migrated.returncode == 0, migrated.stderr.decode()
    assert f"migrated {old} -> {old}:" in migrated.stdout.decode()
    assert content_digest(old) == before  # every frame kept: the cited digest holds
    with CassetteFile(old, create=False) as cassette:
        assert cassette.recipe is not None and cassette.recipe["model"] == "smollm2-135m"
        # written by 0.4, whose default cut sentences after every a.m.: its recipe says so
        assert cassette.recipe["options"]["splitting"] == 1
    again = run_cli(*args, "replay", "--quiet", "--overwrite", env=_env())
    assert again.returncode == 0, again.stderr.decode()
    assert "note:" not in again.stderr.decode()
    assert out.read_bytes() == GOLDEN.read_bytes()
    assert run_cli("migrate", "cassette", str(old)).stdout.decode().endswith("nothing to do\n")


def test_a_cassette_a_later_release_wrote_without_a_recipe_migrates_to_todays_defaults(
    tmp_path,
):
    """The library records no recipe (its options are the caller's code): such a cassette of
    a release after 0.4 was made under today's defaults, unless flags say otherwise."""
    old = tmp_path / "lib.oscas"
    with CassetteFile(CASSETTE, create=False) as cassette:
        header_end = cassette.header_end
    old.write_bytes(encode_header("offline-scorer/0.5.0") + CASSETTE.read_bytes()[header_end:])
    done = run_cli("migrate", "cassette", str(old), env=_env())
    assert done.returncode == 0, done.stderr.decode()
    with CassetteFile(old, create=False) as cassette:
        assert cassette.recipe is not None and cassette.recipe["options"]["splitting"] == 2


def test_migrate_results_checks_every_digest_before_writing(tmp_path):
    old = _format_2(tmp_path)
    saved = old.read_bytes()
    wrong = run_cli("migrate", "results", str(old), "--data", str(DATA), env=_env())
    assert_clean_error(wrong, 2, "line 1 (id '01-harbor-bridge') was not made with the recipe")
    assert old.read_bytes() == saved  # nothing written on a refusal
    new = tmp_path / "new.jsonl"
    done = run_cli(
        "migrate", "results", str(old), "--data", str(DATA), "--model", "smollm2-135m",
        "--out", str(new),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert new.read_bytes() == GOLDEN.read_bytes()


def test_reproduce_refuses_a_format_2_file_with_the_command_to_run(tmp_path):
    old = _format_2(tmp_path)
    proc = run_cli("reproduce", str(old), "--cassette", str(CASSETTE), "--data", str(DATA))
    assert_clean_error(proc, 2, "results file of an earlier format", "migrate results")


def test_resume_continues_with_the_recipe_in_the_results_header(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_bytes(b"".join(line + b"\n" for line in GOLDEN.read_bytes().splitlines()[:6]))
    proc = run_cli(
        "eval", str(DATA), "--out", str(out), "--resume", "--cassette", str(CASSETTE),
        "--record-mode", "replay", "--quiet", env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    assert "resume:" not in proc.stderr.decode()  # nothing scored again
    assert out.read_bytes() == GOLDEN.read_bytes()


@pytest.mark.live
def test_a_live_run_with_other_options_reproduces_with_no_flags(tmp_path):
    """Recorded live on the small judge with a non-default option, then derived again with
    no option flag and no model flag: the header carries both."""
    data = tmp_path / "one.jsonl"
    data.write_text(DATA.read_text(encoding="utf-8").splitlines()[2] + "\n", encoding="utf-8")
    cassette, out = tmp_path / "live.oscas", tmp_path / "live.jsonl"
    live = run_cli(
        "eval", str(data), "--out", str(out), "--cassette", str(cassette), "--max-questions",
        "2", "--model", "smollm2-135m", "--threads", "2", "--quiet",
    )  # fmt: skip
    assert live.returncode in (0, 1), live.stderr.decode()
    with CassetteFile(cassette, create=False) as recorded:
        assert recorded.recipe is not None
        assert recorded.recipe["options"]["max_questions"] == 2
    proc = run_cli(
        "reproduce", str(out), "--cassette", str(cassette), "--data", str(data), env=_env()
    )
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    assert "2 of 2 lines identical" in proc.stdout.decode()


def test_the_revisions_a_recipe_carries_enter_every_digest():
    """The request and shown-text revisions are one table, read by the recipe and the
    identity a results line's digest covers; a revision at 1 is left out of both, so digests
    made before a revision existed hold until it is bumped."""
    from offline_scorer.formats import SUMMARIZATION_SHOWN_REVISION
    from offline_scorer.scorers.registry import get_spec
    from offline_scorer.scorers.summarization.options import ScorerOptions
    from offline_scorer.scorers.summarization.scorer import SummarizationScorer
    from tests.helpers import scripted

    identity = SummarizationScorer(scripted([True], 1, [True]), ScorerOptions()).identity()
    revisions = get_spec("summarization").revisions
    assert revisions and all(identity[name] == value for name, value in revisions.items())
    assert ("shown" in identity) == (SUMMARIZATION_SHOWN_REVISION > 1)
