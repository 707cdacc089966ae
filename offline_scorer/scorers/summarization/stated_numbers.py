"""The numbers a text states, read the same whether written in digits or words.

A reason or explanation may state only numbers its inputs (or the computed figures) state, and
an affirming reason only those of the text it cites; comparing them needs one spelling for
"3", "three" and "3,000" against "3000", so a judge that writes "seven" for a source's "7" is
not refused for it.
"""

from __future__ import annotations

import functools

from offline_scorer.scorers.summarization.lexicon import NUMBER, NUMBER_WORDS, SCALE_WORDS, WORD


@functools.lru_cache(maxsize=4096)
def numbers_stated(text: str) -> frozenset[str]:
    """The numbers a text states, as words or digits, in one spelling ("3", "three" -> "3").
    Cached: a source's numbers are read once per verdict."""
    found = {number.replace(",", "") for number in NUMBER.findall(text)}
    for word in WORD.findall(text.lower()):
        if word in NUMBER_WORDS:
            found.add(str(NUMBER_WORDS[word]))
        elif word in SCALE_WORDS:
            found.add(word)
    return frozenset(found)
