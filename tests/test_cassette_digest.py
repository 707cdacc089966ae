"""The content digest (`cassette digest`, `cassette verify --digest`): what keeps it, what
changes it."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from offline_scorer.assembly.open import pinned_identity
from offline_scorer.cassette.digest import DIGEST_PREFIX, content_digest, parse_digest
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.cassette.records import Exchange, from_payload, to_payload
from offline_scorer.cassette.store.container import CassetteFile
from offline_scorer.errors import CassetteFileError, InputError
from offline_scorer.judging.protocol import Completion
from offline_scorer.models.registry import load_registry
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from tests.conftest import FIXTURES
from tests.helpers import recorded_options
from tests.test_cli import assert_clean_error, run_cli

FIXTURE_CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"
FIXTURE_DIGEST = content_digest(FIXTURE_CASSETTE)


def _pairs() -> list[dict[str, str]]:
    lines = (FIXTURES / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _rerecord(path: Path, pairs: list[dict[str, str]]) -> None:
    """Score `pairs` live into `path`, the "live" model being a replay of the fixtures."""
    identity = pinned_identity(load_registry().resolve("default"))
    assert identity is not None
    source = CassetteJudge(FIXTURE_CASSETTE, mode=RecordMode.REPLAY, identity=identity)
    with CassetteJudge(path, mode=RecordMode.RECORD, identity=identity, live=source) as judge:
        scorer = SummarizationScorer(judge, recorded_options())
        for pair in pairs:
            scorer.score_texts(pair["source"], pair["summary"])
    source.close()


def _copy_with(path: Path, change: dict[int, Completion]) -> None:
    """A copy of the fixtures written through the store (so every CRC is computed anew), the
    responses of the exchanges numbered in `change` replaced."""
    with CassetteFile(FIXTURE_CASSETTE, create=False) as cas:
        exchanges = [from_payload(cas, key, payload) for key, payload in cas.iter_exchanges()]
    with CassetteFile(path, create=True) as out:
        for index, ex in enumerate(exchanges):
            completion = change.get(index, ex.completion)
            out.append_exchange(ex.key, to_payload(out, ex.step, ex.parts, completion, ex.meta))


def _first_preprocess() -> tuple[int, Exchange]:
    with CassetteFile(FIXTURE_CASSETTE, create=False) as cas:
        for index, (key, payload) in enumerate(cas.iter_exchanges()):
            exchange = from_payload(cas, key, payload)
            if exchange.step == "preprocess" and '"supported":true' in exchange.text:
                return index, exchange
    raise AssertionError("the fixtures have a supported claim")


def test_digest_is_printed_with_its_version():
    proc = run_cli("cassette", "digest", str(FIXTURE_CASSETTE))
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert re.fullmatch(r"oscas-content-v1:sha256:[0-9a-f]{64}  \S+  \(28 exchanges\)\n", out)
    assert out.split()[0] == str(FIXTURE_DIGEST)


def test_merge_into_a_new_file_keeps_the_digest(tmp_path):
    merged = tmp_path / "merged.oscas"
    proc = run_cli("cassette", "merge", str(merged), str(FIXTURE_CASSETTE), str(FIXTURE_CASSETTE))
    assert proc.returncode == 0, proc.stderr.decode()
    assert merged.read_bytes() != FIXTURE_CASSETTE.read_bytes()  # other layout, same content
    assert content_digest(merged) == FIXTURE_DIGEST


def test_repair_of_an_intact_file_keeps_the_digest(tmp_path):
    copy = tmp_path / "copy.oscas"
    shutil.copyfile(FIXTURE_CASSETTE, copy)
    proc = run_cli("cassette", "repair", str(copy))
    assert proc.returncode == 0 and "intact" in proc.stdout.decode()
    assert content_digest(copy) == FIXTURE_DIGEST


def test_re_recording_the_same_exchanges_keeps_the_digest(tmp_path):
    """In another order, and again into the same file (superseding records of the same key)."""
    pairs = _pairs()
    forward, backward = tmp_path / "forward.oscas", tmp_path / "backward.oscas"
    _rerecord(forward, pairs)
    _rerecord(backward, pairs[::-1])
    assert forward.read_bytes() != backward.read_bytes()
    assert content_digest(forward) == content_digest(backward) == FIXTURE_DIGEST
    _rerecord(forward, pairs[:3])
    with CassetteFile(forward, create=False) as cas:
        assert len(list(cas.iter_exchanges())) > cas.exchange_count  # records superseded
    assert content_digest(forward) == FIXTURE_DIGEST


def test_a_flipped_verdict_passes_plain_verify_and_fails_the_digest(tmp_path):
    index, exchange = _first_preprocess()
    flipped = exchange.text.replace('"supported":true', '"supported":false', 1)
    tampered = tmp_path / "tampered.oscas"
    _copy_with(tampered, {index: replace(exchange.completion, text=flipped)})
    proc = run_cli("cassette", "verify", str(tampered))
    assert proc.returncode == 0, proc.stderr.decode()  # CRCs and keys all hold
    proc = run_cli("cassette", "verify", str(tampered), "--digest", str(FIXTURE_DIGEST))
    assert_clean_error(proc, 6, "CONTENT DIFFERS", str(tampered), str(content_digest(tampered)))
    proc = run_cli("cassette", "verify", str(FIXTURE_CASSETTE), "--digest", str(FIXTURE_DIGEST))
    assert proc.returncode == 0 and "content digest matches" in proc.stdout.decode()


@pytest.mark.parametrize("what", ["last byte of the text", "a verdict probability"])
def test_any_response_change_changes_the_digest(tmp_path, what):
    index, exchange = _first_preprocess()
    completion = exchange.completion
    if what == "last byte of the text":
        changed = replace(completion, text=completion.text[:-1] + " ")
    else:
        assert completion.verdict_probabilities
        first, *rest = completion.verdict_probabilities
        changed = replace(completion, verdict_probabilities=(first * (1 - 1e-12), *rest))
    path = tmp_path / "changed.oscas"
    _copy_with(path, {index: changed})
    assert content_digest(path) != FIXTURE_DIGEST
    _copy_with(tmp_path / "same.oscas", {})  # the copy itself is not what changed it
    assert content_digest(tmp_path / "same.oscas") == FIXTURE_DIGEST


def test_an_edited_request_gets_no_digest(tmp_path):
    """A record whose stored request no longer hashes to its key is refused, not digested."""
    with CassetteFile(FIXTURE_CASSETTE, create=False) as cas:
        key, payload = next(iter(cas.iter_exchanges()))
        exchange = from_payload(cas, key, payload)
    edited = replace(exchange.parts, messages=((exchange.parts.messages[0][0], "edited"),))
    path = tmp_path / "edited.oscas"
    with CassetteFile(path, create=True) as out:
        out.append_exchange(key, to_payload(out, exchange.step, edited, exchange.completion, {}))
    with pytest.raises(CassetteFileError, match="does not match its key"):
        content_digest(path)


def test_digest_forms_a_user_may_paste():
    hex_ = FIXTURE_DIGEST.hex
    for given in (str(FIXTURE_DIGEST), f"sha256:{hex_}", hex_, hex_.upper()):
        assert parse_digest(given) == hex_
    assert str(FIXTURE_DIGEST).startswith(DIGEST_PREFIX)
    with pytest.raises(InputError, match="version 9"):
        parse_digest(f"oscas-content-v9:sha256:{hex_}")
    with pytest.raises(InputError, match="not a content digest"):
        parse_digest(hex_[:-1])


def test_digest_of_a_missing_file_is_one_line(tmp_path):
    proc = run_cli("cassette", "digest", str(tmp_path / "absent.oscas"))
    assert_clean_error(proc, 2, "no such cassette")
    proc = run_cli("cassette", "verify", str(FIXTURE_CASSETTE), "--digest", "abc")
    assert_clean_error(proc, 2, "not a content digest")
