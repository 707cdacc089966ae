"""The shape every free text of the judge is decoded into: one bounded run of whole sentences.

A small model left to itself cuts a reason mid-word at its length bound, copies a list number,
drifts into symbols or another script, and states numbers of its own. Decoding makes most of
that impossible, whatever the model: a text starts with a capital letter (or a letter of an
uncased script), holds only letters of the scripts its inputs are written in, spaces and
ordinary punctuation (no digits, no number characters), and ends with sentence punctuation
inside its bound. What the grammar cannot see (a sentence stopped only because the bound came,
a number spelled out, a text too short to say anything) is checked in `readable`.

The pattern is plain JSON-schema regex of one form, `^[first][body]{0,n}[end]$`, which the
llama.cpp backend's GBNF compiler and the outlines backend both translate.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# Latin letters (ASCII, Latin-1, Extended-A and -B): always allowed, as the prompts are English.
_LATIN_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de"
_LATIN_LETTERS = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
# Ordinary punctuation inside a sentence. No double quote or backslash: JSON would need escapes
# for them, and a model quotes with ' or typographic quotes as well.
_PUNCTUATION = " ,;:'()/%&\\-\u2018\u2019\u201c\u201d\u2013\u2014.!?"
_END = ".!?"
_WIDE_END = "\u3002\uff01\uff1f"  # ideographic full stop, wide ! and ?: unspaced scripts
_UNSPACED = frozenset({"CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR"})
_BEYOND_LATIN = re.compile("[^\x00-\u024f]")


@dataclass(frozen=True)
class Alphabet:
    """The scripts of a request's inputs beyond Latin, by Unicode name ("CYRILLIC", "CJK")."""

    scripts: tuple[str, ...] = ()


LATIN = Alphabet()


def _script(char: str) -> str | None:
    if not unicodedata.category(char).startswith("L"):
        return None
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else None


@functools.lru_cache(maxsize=256)
def _scripts_of(text: str) -> frozenset[str]:
    if not _BEYOND_LATIN.search(text):  # the common case, decided by one C-level scan
        return frozenset()
    found = {_script(char) for char in set(text) if ord(char) > 0x24F}
    return frozenset(script for script in found if script and script != "LATIN")


def alphabet_of(*texts: str) -> Alphabet:
    """The alphabet a judge may write in about these texts: Latin plus their other scripts."""
    scripts: set[str] = set()
    for text in texts:
        scripts |= _scripts_of(text)
    return Alphabet(tuple(sorted(scripts))) if scripts else LATIN


@functools.lru_cache(maxsize=64)
def _script_chars(script: str) -> tuple[str, str]:
    """(capitals, letters) of one script, as class ranges.

    A cased script's capitals start a sentence, an uncased script's every letter does. Letters
    need their combining marks: a mark counts when its 128-character block holds letters of
    the script. One pass over the planes in use, once per script and process.
    """
    capitals: list[int] = []
    letters: set[int] = set()
    marks: list[int] = []
    blocks: set[int] = set()
    for code in range(0x250, 0x32000):
        char = chr(code)
        category = unicodedata.category(char)
        if category[0] == "L" and _script(char) == script:
            letters.add(code)
            blocks.add(code >> 7)
            if category in ("Lu", "Lt", "Lo"):
                capitals.append(code)
        elif category[0] == "M":
            marks.append(code)
    letters.update(code for code in marks if code >> 7 in blocks)
    return _ranges(capitals), _ranges(sorted(letters))


def _ranges(codes: Iterable[int]) -> str:
    out: list[str] = []
    start = previous = -2
    for code in [*codes, -10]:
        if code == previous + 1:
            previous = code
            continue
        if start >= 0:
            span = f"{_escape(start)}-{_escape(previous)}"
            out.append(_escape(start) if start == previous else span)
        start = previous = code
    return "".join(out)


def _escape(code: int) -> str:
    char = chr(code)
    return "\\" + char if char in "\\]^-[" else char


@functools.lru_cache(maxsize=64)
def sentence_pattern(max_chars: int, alphabet: Alphabet) -> str:
    """Whole sentences of at most `max_chars` characters in `alphabet`, ending in . ! or ?."""
    first, letters, end = _LATIN_UPPER, _LATIN_LETTERS, _END
    for script in alphabet.scripts:
        capitals, script_letters = _script_chars(script)
        first += capitals
        letters += script_letters
        if script in _UNSPACED:
            end = _END + _WIDE_END
    body = letters + _PUNCTUATION + (_WIDE_END if end != _END else "")
    return f"^[{first}][{body}]{{0,{max_chars - 2}}}[{end}]$"
