"""The lexicon's FROZEN lists and patterns shape what the judge is asked, so every cassette key:
each is pinned here by the SHA-256 of its content. A failure means a change that moves
recorded keys: make it on purpose (new recordings, a new requests revision) and update the
hash, or undo it. VETTING-ONLY lists are not pinned: changing one changes refusals, not keys."""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

import pytest

from offline_scorer.scorers.summarization import lexicon

FROZEN = {
    "ABBREVIATIONS": "df1bf2c822fe0bc331d4e727e39ce6be1b38ee7d001251384fb393b3b7a688ba",
    "CLOCK": "d7efe14f0cd4de81ef023f85b69a488ed6d8249625fbdd87c17f1c31672b6a57",
    "STOPWORDS": "86c5c0a753d9cafcc88a6bebe8327b1be489fd4f5c286e4f2cb20d0d9095b639",
    "FUNCTION_WORDS": "d1c48ddec85f594735fcac36d182d8f42f25c42511e9d31e42a1a0ba1dec556f",
    "JUDGING_TERMS": "ace4b7b20c0840a8d62e25efab0ef60c3b4fc3fe8e35423d96439864bce8f4da",
    "JUDGING_WORDS": "fef2c9af4253a404fd4ee5112115eec112d4edd7d585d90ef1f4f9a0f6e9de44",
    "AUXILIARIES": "e70de2330badd2542d745a99996e234f554bd7ed2af3efaef9190e3d27bf35e7",
    "IRREGULAR_PAST": "c19ff69cef6fbba9b3b1796981ad9e41511248290b9f98bc704cc5a3bcfc45c4",
    "COORDINATORS": "7960772b9e05fb9416c5f2c0fd92d7c20f08563f6e956fe55950b19ad537bfe8",
    "PRONOUNS": "6ae9314f616dec7fe9ea86b30bc1d651a577da84f053815a273b7734179fe804",
    "FOLLOWS_A_VERB": "11b34600bfe450ed5389ac88be62504e9e3907cd3c08379bfde14492c813ccb6",
    "NOT_IN_A_SUBJECT": "cc68ef38eb52c4049e51b5512fc7c663244da2ddcacd5f5622a083dedde56364",
    "OPENERS": "7c1b85057704722254116a4634c885279b25c3f1d2da966fca3c8456838fe876",
    "NEVER_LAST": "c0ff4e409cadd875da486b4edd212926fce03f355f9b261fa681786ca6f2a770",
    "FILLERS": "fa2675a8e8a6f62e5636ab737778584346f61f8312f1f144bb6ca17dbdd2671a",
    "ASKING": "2a3ca43cff591bc1438419337f7038b9264cc9c4705915b88a4d3d97e76e9335",
    "CONTRACTION_ENDS": "bf8558a13ebce1036b44bc1232d48f32920fa47030593b1c0223b3f4d86e9c4f",
    "BRITISH_SPELLINGS": "44f2d46db061130c5d2957e11513491d695a9a02f9982e3319fa468c60e4f2d4",
}
"""Each frozen list's hash: of its words sorted one a line (a set), or of its repr (an ordered
table, whose order matters)."""

FROZEN_PATTERNS = {
    "TOKEN": "[^\\W_]+(?:['\u2019.-][^\\W_]+)*",
    "LETTER_RUN": "[^\\W\\d_]+",
    "GRAMMAR_NUMBER": "[0-9]{1,9}(?:[.,][0-9]{1,9})?",
}
"""Patterns that decide what the judge is asked: the grounding token (which sentences state a
fact, how facts are cut), the letter run (a grammar's words) and the grammar's number (it is
written into "open" schemas)."""


def _digest(value: object) -> str:
    text = "\n".join(sorted(value)) if isinstance(value, frozenset) else repr(value)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_a_frozen_list_is_as_recorded(name: str) -> None:
    assert _digest(getattr(lexicon, name)) == FROZEN[name]


@pytest.mark.parametrize("name", sorted(FROZEN_PATTERNS))
def test_a_frozen_pattern_is_as_recorded(name: str) -> None:
    assert getattr(lexicon, name).pattern == FROZEN_PATTERNS[name]


def test_the_word_and_the_number_are_the_variants_base() -> None:
    """The one word and the one number; their variants are the same pieces rearranged."""
    assert lexicon.WORD.findall("Don't re-register 3 U.S. cars") == [
        "Don't",
        "re-register",
        "U",
        "S",
        "cars",
    ]
    assert lexicon.NUMBER.findall("3,000 votes, 1.5 km, 7") == ["3,000", "1.5", "7"]
    assert lexicon.TOKEN.findall("the U.S. gave 3.5") == ["the", "U.S", "gave", "3.5"]
    assert lexicon.word_pattern(joined=False) == lexicon.LETTER_RUN_PATTERN
    assert lexicon.number_pattern(separators="") == r"\d+"


ROOM = Path(lexicon.__file__).parent
_SPELLED = re.compile(r"\[\^\\{1,2}W|\\{1,2}d[+*{]|\[0-9\]|\[A-Za-z\]|\[a-z\]|\\{1,2}w")
"""A pattern spelling a word or number unit of its own: a letter class, digits, \\w, ASCII."""
ASCII_BY_DESIGN = {
    ("facts.py", "_JOIN"),  # a comma and an English joining word ("and", "but"): ASCII words
    ("facts.py", "_SPEAKER"),  # a transcript speaker: capitalised ASCII names and a colon
}
"""FROZEN fact-cutting patterns that read English layout, not words: each names its exception."""


def test_only_the_lexicon_spells_word_and_number_patterns() -> None:
    """No module of the room but the lexicon spells a word or number unit of its own: the
    others build their patterns from the lexicon's pieces (`WORD`, `NUMBER`, `LETTER`,
    `word_pattern`, `number_pattern`), except the listed ASCII layout patterns of `facts`."""
    spelled = set()
    for path in sorted(ROOM.glob("*.py")):
        if path.name == "lexicon.py":
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                text = ast.get_source_segment(source, node.value) or ""
                if text.startswith("re.compile(") and _SPELLED.search(text):
                    spelled.add((path.name, ast.unparse(node.targets[0])))
    assert spelled == ASCII_BY_DESIGN
