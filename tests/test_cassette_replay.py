"""Record modes, keys and miss diagnostics, with a scripted judge standing in for the model.

The recorder cannot tell a scripted judge from a live one, which lets these tests run in
milliseconds; the live recording itself is tested in test_live_fixtures.py.
"""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys

import pytest

from offline_scorer import CassetteMissError, ConfigError
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.cassette.key import key_parts
from offline_scorer.cassette.store.container import CassetteFile
from offline_scorer.judging.protocol import JudgeIdentity
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.prompts import preprocess_request
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from tests.conftest import FIXTURES, ROOT, block_imports_code, fixture_ids, replay_env
from tests.helpers import SOURCE, SUMMARY, scripted

DEFAULT_ASKING = Asking.of(ScorerOptions())

IDENTITY = JudgeIdentity("a" * 64, "b" * 64, "test-backend/1")
T, F = True, False


def score(judge, source=SOURCE, summary=SUMMARY, **options):
    return SummarizationScorer(judge, ScorerOptions(**options)).score_texts(source, summary)


def recorder(path, mode, live=None, identity=IDENTITY):
    return CassetteJudge(path, mode=RecordMode(mode), identity=identity, live=live)


def test_record_then_replay_gives_identical_results_without_the_live_judge(tmp_path):
    path = tmp_path / "c.oscas"
    live = scripted([T, F], 3, [T, T, F])
    first = score(recorder(path, "record", live))
    replayed = score(recorder(path, "replay"))
    assert replayed.to_json() == first.to_json()
    assert len(live.calls) == 3


def test_auto_replays_hits_and_records_misses(tmp_path):
    path = tmp_path / "c.oscas"
    score(recorder(path, "record", scripted([T], 1, [T])))
    live = scripted([T], 1, [T])
    judge = recorder(path, "auto", live)
    score(judge)
    assert (judge.hits, judge.recorded, len(live.calls)) == (3, 0, 0)
    score(judge, summary="A different summary.")
    # preprocess and analyze see the summary and miss; the reason prompt sees only the numbers
    # and the scripted verdicts, which are unchanged, so it replays.
    assert (judge.hits, judge.recorded, len(live.calls)) == (4, 2, 2)


def test_auto_never_builds_the_live_judge_when_everything_hits(tmp_path):
    path = tmp_path / "c.oscas"
    score(recorder(path, "record", scripted([T], 1, [T])))

    def factory():
        raise AssertionError("the live judge must not be loaded")

    score(recorder(path, "auto", factory))


def test_record_always_runs_live_and_off_never_writes(tmp_path):
    path = tmp_path / "c.oscas"
    live = scripted([T], 1, [T])
    score(recorder(path, "record", live))
    score(recorder(path, "record", live))
    assert len(live.calls) == 6
    with CassetteFile(path, create=False) as cas:
        assert len(list(cas.iter_exchanges())) == 6 and cas.exchange_count == 3
    other = tmp_path / "off.oscas"
    score(recorder(other, "off", live))
    assert not other.exists()


def test_replay_of_a_missing_cassette_is_a_clear_miss(tmp_path):
    with pytest.raises(CassetteMissError, match="does not exist"):
        recorder(tmp_path / "none.oscas", "replay")


def _miss(tmp_path, change):
    path = tmp_path / "c.oscas"
    score(recorder(path, "record", scripted([T], 1, [T])))
    judge = recorder(path, "replay", identity=change.get("identity", IDENTITY))
    with pytest.raises(CassetteMissError) as info:
        score(judge, **change.get("score", {}))
    return str(info.value)


def test_miss_names_a_changed_prompt_with_position_and_context(tmp_path):
    message = _miss(tmp_path, {"score": {"summary": "A ferry left Port Alder with 41 passengers."}})
    assert "replay miss for step 'preprocess'" in message
    assert "prompt: message 2 (user) first differs at character" in message
    assert "40 passengers" in message and "41 passengers" in message
    assert "model" not in message.split("differs in", 1)[1].split("prompt")[0]


def test_miss_names_a_changed_model(tmp_path):
    other = dataclasses.replace(IDENTITY, model_sha256="c" * 64)
    message = _miss(tmp_path, {"identity": other})
    assert "model: recorded sha256 aaaaaaaaaaaaaaaa... vs now cccccccccccccccc..." in message


def test_miss_names_changed_settings_and_schema(tmp_path):
    path = tmp_path / "c.oscas"
    two = SOURCE + " It arrived in Kellow at noon after a calm crossing."
    score(recorder(path, "record", scripted([T], 1, [T])), source=two)
    with pytest.raises(CassetteMissError) as info:
        score(recorder(path, "replay"), source=two, max_questions=1)
    message = str(info.value)
    assert "output schema first differs" in message
    assert '"minItems":2,"maxItems":2' in message and '"minItems":1,"maxItems":1' in message
    assert "prompt: message 2 (user)" in message  # the prompt states the question limit too


def test_key_ignores_what_does_not_change_the_answer():
    request = preprocess_request(SOURCE, SUMMARY, 10, DEFAULT_ASKING)
    seeded = dataclasses.replace(
        request, sampling=dataclasses.replace(request.sampling, seed=7), step="renamed"
    )
    assert key_parts(request, IDENTITY).digest() == key_parts(seeded, IDENTITY).digest()
    longer = dataclasses.replace(
        request, sampling=dataclasses.replace(request.sampling, max_tokens=99)
    )
    assert key_parts(request, IDENTITY).digest() != key_parts(longer, IDENTITY).digest()


def test_a_request_met_again_keeps_its_key_and_a_new_request_is_keyed_afresh(tmp_path):
    """Keys are kept per request object (the builders cache theirs); a caller that builds a new
    request from a schema dict it changed in place gets the new schema's key, not the old one."""
    path = tmp_path / "c.oscas"
    score(recorder(path, "record", scripted([T], 1, [T])))
    judge = recorder(path, "replay")
    request = preprocess_request(SOURCE, SUMMARY, 10, DEFAULT_ASKING)
    assert (
        preprocess_request(SOURCE, SUMMARY, 10, DEFAULT_ASKING) is request
    )  # cached by the builder
    first = judge.complete(request)
    assert judge.complete(request) == first and judge.hits == 2
    schema = copy.deepcopy(dict(request.output_schema))
    again = dataclasses.replace(request, output_schema=schema)
    assert judge.complete(again) == first  # an equal request built anew: the same key
    schema["properties"]["questions"]["minItems"] = 0  # the caller's template, changed in place
    changed = dataclasses.replace(request, output_schema=schema)
    with pytest.raises(CassetteMissError, match="output schema first differs"):
        judge.complete(changed)


def test_same_exchanges_in_the_same_order_give_the_same_bytes(tmp_path):
    for name in ("one", "two"):
        judge = recorder(tmp_path / f"{name}.oscas", "record", scripted([T, F], 2, [T, F]))
        score(judge)
        score(judge, summary="Another summary.")
        judge.close()
    assert (tmp_path / "one.oscas").read_bytes() == (tmp_path / "two.oscas").read_bytes()


def test_env_var_forces_replay(monkeypatch):
    from offline_scorer.assembly.open import resolve_mode

    monkeypatch.setenv("OFFLINE_SCORER_RECORD_MODE", "replay")
    mode, note = resolve_mode(RecordMode.RECORD)
    assert mode is RecordMode.REPLAY and "overrides --record-mode record" in note
    monkeypatch.setenv("OFFLINE_SCORER_RECORD_MODE", "sometimes")
    with pytest.raises(ConfigError, match="unknown record mode 'sometimes'"):
        resolve_mode(None)


def _cli_replay(args, env, cwd=ROOT):
    code = block_imports_code("llama_cpp", "llguidance") + (
        "from offline_scorer.cli import main\n"
        "sys.argv = ['offline-scorer'] + sys.argv[1:]\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, env=env, cwd=cwd, timeout=120
    )


@pytest.mark.parametrize("pair_id", fixture_ids())
def test_committed_fixture_cassette_replays_to_the_golden_bytes(pair_id, tmp_path):
    """The CLI replays each fixture with no runtime and no model file: golden bytes out."""
    proc = _cli_replay(
        [
            "score",
            "--source",
            f"fixtures/pairs/{pair_id}.source.txt",
            "--summary",
            f"fixtures/pairs/{pair_id}.summary.txt",
            "--json",
            "--record-mode",
            "replay",
            "--cassette",
            "fixtures/cassettes/fixtures.oscas",
        ],
        env=replay_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr.decode()
    golden = (FIXTURES / "golden" / f"{pair_id}.json").read_bytes()
    assert proc.stdout == golden


def test_cli_miss_exits_5_with_one_line(tmp_path):
    proc = _cli_replay(
        [
            "score",
            "--source",
            "fixtures/pairs/01-harbor-bridge.source.txt",
            "--summary",
            "fixtures/pairs/02-seed-library.summary.txt",
            "--record-mode",
            "replay",
            "--cassette",
            "fixtures/cassettes/fixtures.oscas",
        ],
        env=replay_env(tmp_path),
    )
    err = proc.stderr.decode()
    assert proc.returncode == 5 and "Traceback" not in err
    assert err.startswith("error: replay miss for step 'preprocess'") and err.count("\n") == 1
