"""Whether a word a judge wrote is a word at all: the inputs' scripts, and an English word list.

A capable judge writes words its inputs do not hold ("The score is 0 because coverage was the
weaker axis."); a small model, denied the words it wants, writes fragments ("ilk of about ible
batteries"). A text may use a word outside its inputs when the word is written in a script the
inputs (or the English of our prompts) use and, for a Latin word, when it is an English word:
pyspellchecker's English frequency list (US spelling; British spellings are looked up as their
US forms). Other scripts have no list here, so a word in one of the inputs' own scripts is taken
as written. The list is loaded on first use only: texts decoded under a vocabulary-confined
grammar never hold a word outside their inputs, so replaying them never loads it.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable

from offline_scorer.scorers.summarization.lexicon import BRITISH_SPELLINGS, CONTRACTION_ENDS

LATIN = "LATIN"


def script_of(char: str) -> str | None:
    """The Unicode script family of a letter ("LATIN", "CYRILLIC", "CJK", ...), else None."""
    if not unicodedata.category(char).startswith("L"):
        return None
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else "UNKNOWN"


@functools.lru_cache(maxsize=1024)
def scripts_of(words: tuple[str, ...]) -> frozenset[str]:
    """The scripts these words are written in, with Latin (the language of the prompts)."""
    return frozenset({LATIN, *(s for w in words for c in w if (s := script_of(c)))})


@functools.lru_cache(maxsize=1)
def _english() -> frozenset[str]:
    from spellchecker import SpellChecker

    return frozenset(SpellChecker(language="en", distance=1).word_frequency.keys())


def _english_word(word: str) -> bool:
    known = _english()
    if word in known:
        return True
    for british, us in BRITISH_SPELLINGS:
        if word.endswith(british) and word[: -len(british)] + us in known:
            return True
    return False


@functools.lru_cache(maxsize=8192)
def is_word(word: str, scripts: frozenset[str]) -> bool:
    """Whether `word` (a run of letters, perhaps with apostrophes or hyphens) may stand in a
    sentence of these scripts: every letter in one of them, and a Latin word in the list
    (each part of a hyphenated word or contraction)."""
    found = {script_of(c) for c in word} - {None}
    if not found <= scripts:
        return False
    if found != {LATIN}:
        return True
    parts = word.lower().replace("\u2019", "'").replace("-", "'").split("'")
    head, tail = parts[0], parts[1:]
    if tail[:1] == ["t"] and head.endswith("n") and not _english_word(head):
        head = head[:-1]  # "doesn't", "isn't": the list holds "does", "is"
    return _english_word(head) and all(p in CONTRACTION_ENDS or _english_word(p) for p in tail)


def unknown_words(words: Iterable[str], scripts: frozenset[str]) -> list[str]:
    """The words that are not words of these scripts (see `is_word`)."""
    return [w for w in words if not is_word(w, scripts)]
