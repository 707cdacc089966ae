"""The sentence splitter and the fact test are fast re-writes of plain definitions; these
properties hold them to those definitions (kept here as the oracle) on any text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from offline_scorer.scorers.summarization import lexicon
from offline_scorer.scorers.summarization.grounding import (
    MIN_QUESTION_CONTENT_WORDS,
    content_words,
    question_candidates,
    sentences,
    states_a_fact,
)

_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\s*\n+\s*")
_LAST_WORD = re.compile(r"(\S+)\s*$")


def reference_sentences(text: str, clock_always_ends: bool = False) -> list[str]:
    """The definition: split after . ! ? (and closers) before space, or at line breaks; an
    abbreviation or a capital initial before the mark does not end a sentence, nor does a
    time's "a.m."/"p.m." before a lowercase letter (unless `clock_always_ends`)."""
    pieces, start = [], 0
    for match in _END.finditer(text):
        found = _LAST_WORD.search(text, start, match.start())
        last = found.group(1).rstrip(".") if found else ""
        initial = len(last) == 1 and last.isalpha() and last.isupper()
        if "\n" not in match.group() and (last.lower() in lexicon.ABBREVIATIONS or initial):
            continue
        following = text[match.end() :].lstrip("\"'(\u201c\u2018")[:1]
        clock = "\n" not in match.group() and last.lower() in ("a.m", "p.m")
        if clock and not clock_always_ends and following.islower():
            continue
        pieces.append(text[start : match.start()])
        start = match.end()
    pieces.append(text[start:])
    out: dict[str, None] = {}
    for piece in pieces:
        cleaned = " ".join(piece.split())
        if lexicon.TOKEN.search(cleaned):
            out.setdefault(cleaned)
    return list(out)


TRICKY = st.lists(
    st.sampled_from(
        [
            *"ab xJ.\n\t!?\"')]\r",
            "Dr.",
            "a.m.",
            "P.M.",
            "on",
            "The",
            "Mr.",
            "e.g.",
            "U.S.",
            "etc.",
            "No.",
            "\u2019",
            "\u00a0",
            "\x1c",
            "\u2028",
            " \n ",
            "\n\n",
            ".)",
            '?"',
            "...",
            "Smith",
            "the",
            "harbor",
            "2.4",
            "bridge",
            "closed",
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(TRICKY, st.text(max_size=60)))
def test_sentences_keep_their_definition(text):
    assert sentences(text, clock_always_ends=False) == reference_sentences(text)
    assert sentences(text, clock_always_ends=True) == reference_sentences(text, True)


def test_a_time_ends_a_sentence_only_before_a_capital():
    text = "It opens at 6:30 a.m. on weekdays. The meeting adjourned at 8:15 p.m. The next one"
    assert sentences(text, clock_always_ends=False) == [
        "It opens at 6:30 a.m. on weekdays.",
        "The meeting adjourned at 8:15 p.m.",
        "The next one",
    ]
    assert sentences(text, clock_always_ends=True)[:2] == ["It opens at 6:30 a.m.", "on weekdays."]


def test_a_question_keeps_the_period_of_a_time():
    assert question_candidates("The meeting adjourned at 8:15 p.m.", clock_always_ends=False) == (
        "Is it true that the meeting adjourned at 8:15 p.m.?",
    )
    old = question_candidates("The meeting adjourned at 8:15 p.m.", clock_always_ends=True)
    assert old == ("Is it true that the meeting adjourned at 8:15 p.m?",)


@settings(max_examples=2000, deadline=None)
@given(st.one_of(TRICKY, st.text(max_size=60)))
def test_states_a_fact_counts_content_words(text):
    assert states_a_fact(text) == (len(content_words(text)) >= MIN_QUESTION_CONTENT_WORDS)


def test_the_fixture_sources_split_as_defined():
    import json
    from pathlib import Path

    for line in Path("fixtures/pairs.jsonl").read_text(encoding="utf-8").splitlines():
        pair = json.loads(line)
        for text in (pair["source"], pair["summary"]):
            assert sentences(text, clock_always_ends=False) == reference_sentences(text)
