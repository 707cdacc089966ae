"""The numbers a text states, read the same whether written in digits or words.

A reason or explanation may state only numbers its inputs (or the computed figures) state, and
an affirming reason only those of the text it cites; comparing them needs one spelling for
"3", "three" and "3,000" against "3000", so a judge that writes "seven" for a source's "7" is
not refused for it.
"""

from __future__ import annotations

import functools
import re

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_TENS = "thirty forty fifty sixty seventy eighty ninety"
_SCALES = "hundred thousand million billion percent half dozen quarter"
_NUMBER_WORDS = {word: value for value, word in enumerate(_ONES.split())}
_NUMBER_WORDS.update((word, 30 + 10 * index) for index, word in enumerate(_TENS.split()))
_SCALE_WORDS = frozenset(_SCALES.split())
NUMBER = r"\d+(?:[.,]\d+)*"
"""A number in digits, with inner separators ("7", "3,000", "1.5"): the one pattern every
check that reads numbers builds on, so they agree on what one number is."""
WORD_PATTERN = r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*"
"""A word: letters, with inner apostrophes or hyphens ("don't", "re-register")."""
_DIGITS = re.compile(NUMBER)
WORD = re.compile(WORD_PATTERN)


@functools.lru_cache(maxsize=4096)
def numbers_stated(text: str) -> frozenset[str]:
    """The numbers a text states, as words or digits, in one spelling ("3", "three" -> "3").
    Cached: a source's numbers are read once per verdict."""
    found = {number.replace(",", "") for number in _DIGITS.findall(text)}
    for word in WORD.findall(text.lower()):
        if word in _NUMBER_WORDS:
            found.add(str(_NUMBER_WORDS[word]))
        elif word in _SCALE_WORDS:
            found.add(word)
    return frozenset(found)
