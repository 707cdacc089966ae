"""Builders for scripted judges, shared by the scoring tests."""

from __future__ import annotations

from pathlib import Path

from offline_scorer import ScorerOptions, create_summarization_scorer
from offline_scorer.assembly.recording import cassette_recipe
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.recorded_recipe import RecordedRecipe
from offline_scorer.testing import ScriptedJudge
from tests.conftest import FIXTURES

FIXTURE_CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"

SOURCE = "The Quillmarsh ferry left Port Alder at 9:00 on 3 May 2021 with 40 passengers."
SUMMARY = "A ferry left Port Alder with 40 passengers."


def scripted(
    claims: list[bool], questions: int, verdicts: list[bool], reason: str = "Scripted."
) -> ScriptedJudge:
    return ScriptedJudge(
        alignment=[
            {"claim": f"claim {i}", "supported": s, "reason": f"why {i}"}
            for i, s in enumerate(claims)
        ],
        questions=[f"Is fact {i} true?" for i in range(questions)],
        coverage=[
            {"question": f"Is fact {i} true?", "answered": a, "reason": f"because {i}"}
            for i, a in enumerate(verdicts)
        ],
        reason=reason,
    )


def mastra_run(source: str = SOURCE, summary: str = SUMMARY) -> dict:
    return {
        "input": {"inputMessages": [{"id": "u1", "role": "user", "content": source}]},
        "output": [{"id": "a1", "role": "assistant", "content": summary}],
    }


def score_of(judge: ScriptedJudge, **options: object):
    scorer = create_summarization_scorer(model=judge, options=options or None)
    return scorer.run(mastra_run())


def _recipe(cassette: Path) -> RecordedRecipe:
    """The recipe a committed recording carries (`assembly.recording.cassette_recipe`)."""
    recipe = cassette_recipe(cassette)
    assert recipe is not None, f"{cassette} carries no recipe"
    return recipe


def recorded_options(cassette: Path = FIXTURE_CASSETTE) -> ScorerOptions:
    """The scorer options a committed recording was made with, read from its recipe: a test
    that replays or records it again builds its scorer so, whatever today's defaults are (the
    fixture recording cuts sentences after every "a.m.", `splitting` 1)."""
    return ScorerOptions.from_mapping(_recipe(cassette).options)


def recorded_flags(cassette: Path = FIXTURE_CASSETTE) -> list[str]:
    """A committed recording's options as command-line flags: a test that records it again
    live passes them, so it asks what the recording asked."""
    return _recipe(cassette).option_flags()


PROBABILITY_DRIFT = 1e-9
"""How far a live re-recording's verdict probability may sit from the committed one. A live run
on another CPU may round one float sum otherwise (seen: one P(true) of the SmolLM2 fixtures
differing in its last bit on an AMD EPYC host, the answers and result bytes all identical);
docs/reproducibility.md promises replay bytes everywhere, a live re-run's only where recorded."""


def assert_same_recording(fresh: Path, committed: Path, first: int | None = None) -> None:
    """A live re-recording holds the committed one: the same exchanges under the same keys,
    in the same order, the same steps, requests and answer texts, and each verdict probability
    within `PROBABILITY_DRIFT` (byte identity of the files is checked first, and is what the
    machine that recorded them gives). `first`: the re-recording scored only the first items,
    so it holds the committed recording's first `first` exchanges."""
    if first is None and fresh.read_bytes() == committed.read_bytes():
        return
    with CassetteFile(fresh, create=False) as new, CassetteFile(committed, create=False) as old:
        assert new.recipe == old.recipe
        ours = list(new.iter_exchanges())
        theirs = list(old.iter_exchanges())[:first]
    assert [key for key, _ in ours] == [key for key, _ in theirs]
    for (key, mine), (_, recorded) in zip(ours, theirs, strict=True):
        assert (mine["step"], mine["request"]) == (recorded["step"], recorded["request"]), key
        answer, expected = mine["response"], recorded["response"]
        assert isinstance(answer, dict) and isinstance(expected, dict)
        assert answer["text"] == expected["text"], key.hex()
        drift = zip(
            answer.get("verdict_probabilities") or (),
            expected.get("verdict_probabilities") or (),
            strict=True,
        )
        assert all(abs(a - b) <= PROBABILITY_DRIFT for a, b in drift), key.hex()
