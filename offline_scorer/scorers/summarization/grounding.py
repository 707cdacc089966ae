"""Grounding: the units a judge may speak of, cut from the texts it judges.

A small model copies from its prompt and loops, so what it may write is fixed before decoding:
claims are the summary's own sentences, and questions are the source's own sentences asked as
yes/no questions. The judge decides which questions to ask and every verdict; the grammar makes
it impossible to claim or ask about anything else, or to repeat itself. The same code counts
content words for the grounding benchmark, so product and measurement agree on what a word is.
"""

from __future__ import annotations

import functools
import re

from offline_scorer.scorers.summarization.lexicon import (
    ABBREVIATIONS,
    CLOCK,
    STOPWORDS,
    TOKEN,
    tokens,
)

# Sentence ends: . ! ? (with closing quotes or brackets) followed by space (group 1: what
# follows the mark), or a line break and the whitespace after it. Both branches start with a
# rare character rather than a look-behind or a space, which lets the regex engine skip ahead:
# the split is a fifth of a replayed evaluation of a new document. Spaces before a line break
# stay with the sentence and go when it is cleaned.
_SENTENCE_END = re.compile(r"[.!?]([\"')\]]*\s+)|\n\s*")
_FIRST_AFTER_QUOTES = re.compile(r"[\"'(\u201c\u2018]*(.)", re.DOTALL)
QUESTION_FRAME = "Is it true that "
MIN_QUESTION_CONTENT_WORDS = 4  # shorter source sentences ("Lol.", "Darn. 1:1.") state no fact


def words(text: str) -> list[str]:
    """The text's grounding tokens (`lexicon.TOKEN`), in lower case."""
    return tokens(text)


def content_words(text: str) -> list[str]:
    """Words that carry meaning: not a stopword, or a number."""
    return [w for w in words(text) if w not in STOPWORDS]


def states_a_fact(sentence: str) -> bool:
    """Whether the sentence has at least MIN_QUESTION_CONTENT_WORDS content words (as
    `content_words` counts them), stopping as soon as it has: most sentences reach the count
    within their first few words, and every new source's sentences are counted on replay."""
    count = 0
    for match in TOKEN.finditer(sentence.lower().replace("\u2019", "'")):
        if match.group() not in STOPWORDS:
            count += 1
            if count >= MIN_QUESTION_CONTENT_WORDS:
                return True
    return False


def sentences(text: str, *, clock_always_ends: bool) -> list[str]:
    """The text's sentences, in order, without repeats; abbreviations do not end one, and a
    time's "a.m."/"p.m." ends one only before a capital (or the end of the text).

    `clock_always_ends` cuts after every "a.m."/"p.m." instead (the scorer option
    `splitting = 1`, which recordings made so name in their recipe)."""
    pieces: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        gap = match.group(1)
        if gap is None:  # a line break: always the end of one
            end = match.start()
        else:
            end = match.start() + 1  # the mark stays with its sentence
            if "\n" not in gap:
                # The last word before the mark (str.split's whitespace is the regex's \s).
                tail = text[start:end].rsplit(None, 1)
                last = tail[-1].rstrip(".") if tail else ""
                initial = len(last) == 1 and last.isalpha() and last.isupper()
                if last.lower() in ABBREVIATIONS or initial:
                    continue  # "Dr. Smith", "J. Smith": not a sentence end
                if last.lower() in CLOCK and not (
                    clock_always_ends or _opens_sentence(text, match.end())
                ):
                    continue  # "7:30 a.m. on Saturdays": the sentence goes on
        pieces.append(text[start:end])
        start = match.end()
    pieces.append(text[start:])
    out: dict[str, None] = {}
    for piece in pieces:
        cleaned = " ".join(piece.split())
        if TOKEN.search(cleaned):
            out.setdefault(cleaned)
    return list(out)


def _opens_sentence(text: str, at: int) -> bool:
    """Whether what starts at `at` (after a mark and its space) can open a sentence: the end of
    the text, or a capital letter, digit or quote before any lowercase letter."""
    found = _FIRST_AFTER_QUOTES.match(text, at)
    return found is None or not found.group(1).islower()


@functools.lru_cache(maxsize=256)
def claims_of(summary: str, *, clock_always_ends: bool) -> tuple[str, ...]:
    """The claims the judge must rule on: each sentence of the summary, once.

    Cached (as question_candidates is): replay rebuilds every request of an evaluation."""
    return tuple(sentences(summary, clock_always_ends=clock_always_ends))


def as_question(sentence: str, *, clock_always_ends: bool) -> str:
    """A closed question answerable "yes" from the sentence it is made from ("... at 8:15
    p.m.?" keeps the time's period; with `clock_always_ends` it is dropped, as recordings
    made with `splitting = 1` asked)."""
    body = sentence.rstrip(" .!?;:")
    last_word = body.rsplit(None, 1)[-1] if body else ""
    if not clock_always_ends and last_word.lower() in CLOCK:
        body += "."
    first = body.split(None, 1)[0] if body else ""
    if first.lower() in STOPWORDS and first[:1].isupper() and first[1:] == first[1:].lower():
        body = first.lower() + body[len(first) :]
    return f"{QUESTION_FRAME}{body}?"


@functools.lru_cache(maxsize=256)
def question_candidates(source: str, *, clock_always_ends: bool) -> tuple[str, ...]:
    """Every question the judge may ask: one per fact-stating source sentence, in source order.

    A source whose sentences are all short offers all of them rather than none.
    """
    every = sentences(source, clock_always_ends=clock_always_ends)
    stating = [s for s in every if states_a_fact(s)]
    asked = (as_question(s, clock_always_ends=clock_always_ends) for s in stating or every)
    return tuple(dict.fromkeys(asked))
