"""What a record mode means is the mode's own, and what a recording judge did is asked of it.

The modes' properties are the one table every caller reads (a caller never compares a mode
with a member), and `CassetteJudge` answers keys, hits and counts through public methods
(`key`, `lookup`, `answers_at_once`, `stats`), so no caller outside the cassette layer checks
its type or sets its attributes. The source checks below keep it that way.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from offline_scorer.cassette.judge import CassetteJudge, CassetteStats, cassette_stats
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.errors import CassetteMissError
from offline_scorer.judging.protocol import (
    Completion,
    JudgeIdentity,
    JudgeRequest,
    Message,
    Usage,
)

PACKAGE = Path(__file__).resolve().parents[1] / "offline_scorer"
IDENTITY = JudgeIdentity("a" * 64, "b" * 64, "test-backend/1")


@pytest.mark.parametrize(
    ("mode", "reads", "writes", "runs_model", "uses_cassette", "needs_recording", "every"),
    [
        (RecordMode.REPLAY, True, False, False, True, True, False),
        (RecordMode.AUTO, True, True, True, True, False, False),
        (RecordMode.RECORD, False, True, True, True, False, True),
        (RecordMode.OFF, False, False, True, False, False, True),
    ],
)
def test_each_mode_says_what_it_does(
    mode, reads, writes, runs_model, uses_cassette, needs_recording, every
):
    assert (
        mode.reads,
        mode.writes,
        mode.runs_model,
        mode.uses_cassette,
        mode.needs_recording,
        mode.runs_every_request,
    ) == (reads, writes, runs_model, uses_cassette, needs_recording, every)


def _ask(text: str) -> JudgeRequest:
    return JudgeRequest(step="preprocess", messages=(Message("user", text),))


class _Counting:
    """A live judge that answers every request with its text, with token counts."""

    def __init__(self) -> None:
        self.asked: list[JudgeRequest] = []

    def complete(self, request: JudgeRequest) -> Completion:
        self.asked.append(request)
        return Completion(request.messages[0].content, usage=Usage(7, 2, 1))


def _judge(path, mode, live=None, **extra):
    return CassetteJudge(path, mode=mode, identity=IDENTITY, live=live, **extra)


def test_the_judge_answers_what_it_holds_without_the_model_and_counts_it(tmp_path):
    path = tmp_path / "c.oscas"
    held, new = _ask("held"), _ask("new")
    with _judge(path, RecordMode.RECORD, _Counting()) as first:
        first.complete(held)
        assert first.stats() == CassetteStats(path, 0, 0, 1, Usage(7, 2, 1))
    live = _Counting()
    judge = _judge(path, RecordMode.AUTO, live, replay_usage=True)
    assert judge.key(held) == first.key(held)
    assert judge.answers_at_once(held) and not judge.answers_at_once(new)
    assert judge.lookup(held) == Completion("held", usage=Usage(7, 2, 1))
    assert judge.lookup(new) is None and live.asked == []
    assert judge.complete(new).text == "new" and live.asked == [new]
    judge.add_hits(3)  # what a cluster actor replayed from its copy of the cassette
    assert cassette_stats(judge) == CassetteStats(path, 4, 2, 1, Usage(14, 4, 2))
    judge.close()
    assert cassette_stats(live) is None  # not a recording judge: nothing to report


def test_replay_answers_everything_at_once_and_off_keeps_no_cassette(tmp_path):
    path = tmp_path / "c.oscas"
    with _judge(path, RecordMode.RECORD, _Counting()) as recording:
        recording.complete(_ask("held"))
    with _judge(path, RecordMode.REPLAY) as replay:
        assert replay.answers_at_once(_ask("not held"))  # its miss is an error, at once
        with pytest.raises(CassetteMissError):
            replay.complete(_ask("not held"))
        assert replay.complete(_ask("held")).usage is None  # a scorer's replay reads no usage
        assert (replay.stats().hits, replay.stats().misses) == (1, 1)
    off = _judge(None, RecordMode.OFF, _Counting())
    assert off.complete(_ask("x")).text == "x" and not off.answers_at_once(_ask("x"))
    assert off.stats() == CassetteStats(None, 0, 0, 0, Usage(7, 2, 1))


_MODE_COMPARISON = re.compile(r"(==|!=|\bis(\s+not)?|\bin\s*[([])\s*RecordMode\.")
_TYPE_CHECK = re.compile(r"isinstance\([^)]*CassetteJudge")


def _sources_outside(*allowed: str) -> dict[str, str]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if not relative.startswith(allowed):
            found[relative] = path.read_text(encoding="utf-8")
    return found


def test_only_the_cassette_layer_compares_record_modes():
    offenders = [
        f"{name}: {line.strip()}"
        for name, text in _sources_outside("cassette/").items()
        for line in text.splitlines()
        if _MODE_COMPARISON.search(line)
    ]
    assert offenders == []


def test_only_the_cassette_layer_and_assembly_check_for_a_cassette_judge():
    offenders = [
        f"{name}: {line.strip()}"
        for name, text in _sources_outside("cassette/", "assembly/").items()
        for line in text.splitlines()
        if _TYPE_CHECK.search(line)
    ]
    assert offenders == []
