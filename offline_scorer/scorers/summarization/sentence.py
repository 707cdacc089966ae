"""The shape every free text of the judge is decoded into: whole sentences of known words.

A small model left to itself cuts a reason mid-word at its length bound, copies a list number,
drifts into symbols or another script, states numbers of its own, and, denied the digits it
wants, fills its bound with quote marks or word fragments ("ilk of about ible batteries").
Decoding makes that impossible, whatever the model: a text is words joined by one space or one
ordinary punctuation mark; every word is a word of the texts the step judges (so in their
scripts, names and numbers spelled as they spell them) or of a fixed judging vocabulary
(`JUDGING_WORDS`); each sentence starts with a capitalised word; a text has at most a bounded
number of words and ends with a word and a full stop. No digit, symbol, fragment or run of
punctuation can be written. What the grammar cannot see (a sentence stopped only because the
bound came, a number the inputs hold but the figures do not, a loop) is checked in `readable`.

A capable model's reason ("The source says the bridge closes on the third of April, not the
fourth.") fits: it speaks of the texts in their own words. The pattern is plain JSON-schema
regex (groups, alternation, bounded repetition), which the llama.cpp backend's GBNF compiler
and the outlines backend both translate.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from offline_scorer.scorers.summarization.lexicon import (
    GRAMMAR_NUMBER,
    GRAMMAR_NUMBER_PATTERN,
    JUDGING_WORDS,
    LETTER_RUN,
)

# What may stand between two words of a sentence; a new sentence starts after ". ".
SEPARATORS = (" ", ", ", "; ", ": ", "-", "'", "\u2019", "/")
_END = "."  # a reason or an explanation states; it does not ask or exclaim
MAX_WORD_LETTERS = 30
"""Longer runs of letters are not taken from the inputs as words."""


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """The words of a step's inputs that a free text may use (beyond `JUDGING_WORDS`).

    It keys several caches (patterns, checks), so its hash is computed once: a tuple of a few
    hundred words would otherwise be hashed again at every lookup."""

    words: tuple[str, ...] = ()
    # The numbers an "open" text may write, as the texts it may cite write them; None: any
    # number (the readability checks compare them with the inputs afterwards). `serve` sets
    # them, since what it decodes goes to the client with no check after.
    numbers: tuple[str, ...] | None = None
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.words, self.numbers)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocabulary):
            return NotImplemented
        return self is other or (
            self._hash == other._hash
            and self.words == other.words
            and self.numbers == other.numbers
        )


GENERIC = Vocabulary()
"""No input words: the judging vocabulary alone."""


@functools.lru_cache(maxsize=256)
def _words_of(text: str) -> frozenset[str]:
    words = frozenset(LETTER_RUN.findall(text))
    if max(map(len, words), default=0) <= MAX_WORD_LETTERS:
        return words
    return frozenset(w for w in words if len(w) <= MAX_WORD_LETTERS)


@functools.lru_cache(maxsize=1024)
def vocabulary_of(*texts: str) -> Vocabulary:
    """The words these texts are written in, each as it appears and in lower case.

    Cached: an evaluation asks for each step's vocabulary twice (its request, its checks),
    and a replayed suite meets the same texts again."""
    found: set[str] = set()
    for text in texts:
        found |= _words_of(text)
    found |= {word.lower() for word in found}
    return Vocabulary(tuple(sorted(found - JUDGING_WORDS)))


def _capitalised(word: str) -> str:
    return word[:1].upper() + word[1:]


@functools.lru_cache(maxsize=64)
def allowed_words(vocabulary: Vocabulary) -> tuple[frozenset[str], frozenset[str]]:
    """(words that may start a sentence, words that may follow another) of a vocabulary.

    A sentence starts with a judging word capitalised, or with an input word as the inputs
    capitalise it (a name, the first word of one of their sentences)."""
    body = JUDGING_WORDS | frozenset(vocabulary.words)
    starts = {_capitalised(w) for w in JUDGING_WORDS}
    starts |= {w for w in vocabulary.words if w[:1].isupper() or not w[:1].islower()}
    return frozenset(starts), body


@functools.lru_cache(maxsize=64)
def sentence_pattern(max_words: int, vocabulary: Vocabulary) -> str:
    """Whole sentences of at most `max_words` words of `vocabulary` (see the module)."""
    starts, body = allowed_words(vocabulary)
    first = "(?:" + "|".join(sorted(starts)) + ")"
    word = "(?:" + "|".join(sorted(body)) + ")"
    joined = "|".join(SEPARATORS)
    return f"^{first}(?:(?:{joined}){word}|\\. {first}){{0,{max_words - 1}}}[{_END}]$"


def counted_words(text: str) -> list[str]:
    """The words of a text as `sentence_pattern` counts them: runs of letters."""
    return LETTER_RUN.findall(text)


_ASCII_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SPECIAL = re.compile(r"([\\.^$*+?()\[\]{}|/])")  # escaped in a fixed opening or a listed word


def citing_numbers(vocabulary: Vocabulary, *texts: str) -> Vocabulary:
    """`vocabulary` whose numbers are only those `texts` write (and any given as texts, such
    as a computed figure), each as written there."""
    found: set[str] = set()
    for text in texts:
        found.update(GRAMMAR_NUMBER.findall(text))
    return Vocabulary(vocabulary.words, tuple(sorted(found)))


def _alternatives(items: frozenset[str] | tuple[str, ...]) -> str:
    return "(?:" + "|".join(_SPECIAL.sub(r"\\\1", item) for item in sorted(items)) + ")"


def _letter_class(letters: str) -> str:
    """A regex class of these letters (each once, sorted; no class syntax among letters)."""
    return "[" + "".join(sorted(set(letters))) + "]"


@functools.lru_cache(maxsize=64)
def open_pattern(
    max_words: int,
    vocabulary: Vocabulary,
    opening: str = "",
    one_sentence: bool = False,
    confined: bool = False,
) -> str:
    """Whole sentences of at most `max_words` words written in the inputs' letters (any word,
    not only theirs) or numbers in digits (the vocabulary's, where it lists them), starting
    with `opening` (words of its own): the "open" style, for a judge that writes words of its
    own; `one_sentence` allows no second sentence; `confined` allows only the vocabulary's
    words and the judging words (for a prompt whose worked examples a judge would otherwise
    retell as its own). The shape is `sentence_pattern`'s (capitalised starts, one separator
    between words, a full stop at the end); which words are words, and which numbers are
    true, is checked in `readable` afterwards."""
    if confined:
        starts, body = allowed_words(vocabulary)
        first, letters_word = _alternatives(starts), _alternatives(body)
    else:
        letters = _ASCII_LETTERS + "".join(c for w in vocabulary.words for c in w if c.isalpha())
        capitals = "".join(c for c in letters if c.isupper())
        letter = _letter_class(letters)
        first = f"{_letter_class(capitals)}{letter}{{0,{MAX_WORD_LETTERS - 1}}}"
        letters_word = f"{letter}{{1,{MAX_WORD_LETTERS}}}"
    numbers = vocabulary.numbers
    if numbers is None:
        word = f"(?:{letters_word}|{GRAMMAR_NUMBER_PATTERN})"
    elif numbers:
        word = f"(?:{letters_word}|{_alternatives(numbers)})"
    else:
        word = f"(?:{letters_word})"
    joined = "|".join(SEPARATORS)
    fixed = len(counted_words(opening))
    start = _SPECIAL.sub(r"\\\1", opening) if fixed else first
    more = max_words - max(fixed, 1)
    step = f"(?:{joined}){word}" if one_sentence else f"(?:{joined}){word}|\\. {first}"
    return f"^{start}(?:{step}){{{int(fixed > 0)},{more}}}[{_END}]$"
