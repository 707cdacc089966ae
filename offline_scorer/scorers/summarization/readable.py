"""Which of the judge's texts a person is shown, and the plain sentence shown instead.

Decoding already confines a live judge's free text to whole sentences in the inputs' alphabet
(`sentence`). Some failures only show in the finished text: a sentence that ended only because
its length bound came (its last word is likely cut), a text too short to say anything ("The
score is."), one that loops, a number spelled out that the figures do not contain. And a
cassette, a scripted judge or a user's own `Judge` answers without our grammar. So every text
is checked here, the same way whoever wrote it; one that fails is replaced by a sentence the
product writes from the verdict itself, and the result says which texts are whose
(`TextAuthors`). The checks read only the answer and the inputs, so replay repeats them exactly.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, TypeVar

from offline_scorer.scorers.summarization.schemas import ClaimVerdict, QuestionVerdict
from offline_scorer.scorers.summarization.sentence import Alphabet, sentence_pattern

Author = Literal["model", "product"]

MIN_WORDS = 4  # "The score is." says nothing; "The source does not mention it." does
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_TENS = "thirty forty fifty sixty seventy eighty ninety"
_SCALES = "hundred thousand million billion percent half dozen quarter"
_NUMBER_WORDS = {word: value for value, word in enumerate(_ONES.split())}
_NUMBER_WORDS.update((word, 30 + 10 * index) for index, word in enumerate(_TENS.split()))
_SCALE_WORDS = frozenset(_SCALES.split())
_DIGITS = re.compile(r"\d+")


@functools.lru_cache(maxsize=64)
def _shape(max_chars: int, alphabet: Alphabet) -> re.Pattern[str]:
    return re.compile(sentence_pattern(max_chars, alphabet))


def numbers_stated(text: str) -> set[str]:
    """The numbers a text states, as words or digits, in one spelling ("3", "three" -> "3")."""
    found = {match for match in _DIGITS.findall(text)}
    for word in _WORD.findall(text.lower()):
        if word in _NUMBER_WORDS:
            found.add(str(_NUMBER_WORDS[word]))
        elif word in _SCALE_WORDS:
            found.add(word)
    return found


def problem(text: str, max_chars: int, alphabet: Alphabet, numbers: Iterable[str]) -> str | None:
    """Why `text` is not shown to a person (None: it is). `numbers` may be stated."""
    if not _shape(max_chars, alphabet).match(text):
        return "is not whole sentences in the inputs' letters"
    if len(text) >= max_chars:
        return "ended only at its length bound"
    words = _WORD.findall(text.lower())
    if len(words) < MIN_WORDS:
        return "is too short to say anything"
    trigrams = list(zip(words, words[1:], words[2:], strict=False))
    if len(set(trigrams)) < len(trigrams):
        return "repeats itself"
    if numbers_stated(text) - set(numbers):
        return "states a number the figures do not hold"
    return None


def _claim_sentence(verdict: ClaimVerdict) -> str:
    if verdict.supported:
        return "The judge found that the source supports this claim."
    return "The judge found that the source does not support this claim."


def _coverage_sentence(verdict: QuestionVerdict) -> str:
    if verdict.answered:
        return "The judge found that the summary answers this question."
    return "The judge found that the summary does not answer this question."


Verdict = TypeVar("Verdict", ClaimVerdict, QuestionVerdict)


def _vet(
    verdicts: Sequence[Verdict],
    alphabet: Alphabet,
    max_chars: int,
    allowed: Callable[[Verdict], set[str]],
    write: Callable[[Verdict], str],
    judged: int,
) -> tuple[list[Verdict], tuple[Author, ...]]:
    """Each verdict with the judge's reason if it may be shown, else with `write`'s sentence;
    verdicts from position `judged` on were filled in by the product already."""
    kept: list[Verdict] = []
    authors: list[Author] = []
    for index, verdict in enumerate(verdicts):
        if index >= judged:
            kept.append(verdict)
            authors.append("product")
        elif problem(verdict.reason, max_chars, alphabet, allowed(verdict)) is None:
            kept.append(verdict)
            authors.append("model")
        else:
            kept.append(verdict.model_copy(update={"reason": write(verdict)}))
            authors.append("product")
    return kept, tuple(authors)


def claim_reasons(
    claims: Sequence[ClaimVerdict], alphabet: Alphabet, inputs: str, max_chars: int
) -> tuple[list[ClaimVerdict], tuple[Author, ...]]:
    """Each claim with the judge's reason if it may be shown, else the product's sentence.
    A reason may state the numbers of `inputs` (the source and the summary)."""
    numbers = numbers_stated(inputs)
    return _vet(claims, alphabet, max_chars, lambda _: numbers, _claim_sentence, judged=len(claims))


def coverage_reasons(
    verdicts: Sequence[QuestionVerdict],
    alphabet: Alphabet,
    inputs: str,
    max_chars: int,
    judged: int,
) -> tuple[list[QuestionVerdict], tuple[Author, ...]]:
    """As `claim_reasons`, with the numbers of `inputs` (the summary) and of the question;
    verdicts from position `judged` on stand for ones the judge never returned."""
    numbers = numbers_stated(inputs)
    return _vet(
        verdicts,
        alphabet,
        max_chars,
        lambda verdict: numbers | numbers_stated(verdict.question),
        _coverage_sentence,
        judged,
    )
