"""Content words and their stems: what "speaks of the same thing" means to the reader checks.

A reason that says "the vote" speaks of a question that says "voted": both checks that compare
a text with its subject (the free-text reader checks and the check of a quote) count content
words by their Snowball stems, so they agree on what a word is.
"""

from __future__ import annotations

import functools

import snowballstemmer

from offline_scorer.scorers.summarization.grounding import content_words


@functools.lru_cache(maxsize=4096)
def content_set(text: str) -> frozenset[str]:
    """The content words of a text (cached: a claim or question is the subject of every check
    of its reason)."""
    return frozenset(content_words(text))


_STEMMER = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=16384)
def stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def stems(words: frozenset[str]) -> frozenset[str]:
    return frozenset(stem(w) for w in words)


@functools.lru_cache(maxsize=4096)
def content_stems(text: str) -> frozenset[str]:
    """The stems of a text's content words: a reason that says "the vote" speaks of a question
    that says "voted" (Snowball's English stemmer)."""
    return stems(content_set(text))
