"""Which of the judge's texts a person is shown, and the plain sentence shown instead.

A text is shown as the judge wrote it when it reads as whole sentences and says nothing false
that can be checked: words (its inputs' words, or words of their language: `known_words`) and
numbers as digits or words, joined by ordinary punctuation, each sentence starting with a
capital and the text ending with a full stop; numbers it states are numbers of its inputs (for
the explanation: the computed figures; for a reason saying its text holds a fact: that text's,
and none in place of its subject's), an explanation gives the score and the limiting axis as
they are, and a reason agrees with its verdict and speaks of its subject. Some failures only
show in the finished text: a text that ended only because its word bound came (its last
sentence is likely cut), or that ends on "and" (closed mid-thought), one too short to say
anything ("The score is.", "Is it true that about.", "These."), one that loops. A live judge's
text was decoded under a grammar (`sentence`); a cassette, a scripted judge or a user's own
`Judge` answers without it, so the grammar's shape is checked too. Every text is checked here,
the same way whoever wrote it; one that fails is replaced by a sentence the product writes from
the verdict itself, and the result says which texts are whose (`TextAuthors`). The checks read
only the answer and the inputs, so replay repeats them exactly.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

from offline_scorer.scorers.summarization.evidence import quote_problem, quoted
from offline_scorer.scorers.summarization.grounding import QUESTION_FRAME
from offline_scorer.scorers.summarization.known_words import scripts_of, unknown_words
from offline_scorer.scorers.summarization.refusal import Refusal, noted
from offline_scorer.scorers.summarization.schemas import (
    ClaimVerdict,
    QuestionVerdict,
    with_reason,
)
from offline_scorer.scorers.summarization.sentence import (
    JUDGING_WORDS,
    SEPARATORS,
    Vocabulary,
    allowed_words,
    counted_words,
)
from offline_scorer.scorers.summarization.stated_numbers import (
    NUMBER,
    WORD,
    WORD_PATTERN,
    numbers_stated,
)
from offline_scorer.scorers.summarization.stems import content_set, content_stems, stem, stems

Author = Literal["model", "product"]

MIN_WORDS = 4  # "The score is." says nothing; "The source does not mention it." does
MIN_SENTENCE_WORDS = 3  # "These." after a sentence adds nothing
MIN_CONTENT_WORDS = 2  # words that are not function words ("Is it true that about." has none)
LOOP_WORDS = 5
"""A run of this many words written twice is a loop; shorter runs recur in plain prose ("of the
summary")."""
_NEUTRAL = JUDGING_WORDS - FACT_NOUNS
MIN_ON_SUBJECT = 0.5
"""The share of a reason's own content words (not judging words) that its claim or question
must hold: a reason that speaks mostly of other facts is about another claim or question."""


_SHAPE = re.compile(
    rf"{LETTER_RUN_PATTERN}(?:(?:"
    + "|".join(re.escape(separator) for separator in SEPARATORS)
    + rf")(?:{LETTER_RUN_PATTERN}|{NUMBER_PATTERN})|\. {LETTER_RUN_PATTERN})*\."
)
"""Whole sentences of words and numbers: letter runs and numbers joined by one separator."""
_POSSESSIVE = re.compile(f"[{APOSTROPHES}]s$")
"""A name's possessive is the name: "Varga's statement" when the inputs name Ines Varga."""
_JOINED = re.compile(f"{LETTER}{{2,}}[^\\W\\ds_][{APOSTROPHES}]{LETTER}{{3,}}")
"""Two words run together at an apostrophe ("the project lead'scale", "the treasurer'spring
report"): a judge writing a possessive whose "s" the next word swallowed. A contraction or a
name keeps a short part ("don't", "they're", "O'Brien", "o'clock"); a plural possessive the
grammar wrote without its space ("his friends'reaction") still reads as one."""


def _word_problem(text: str, vocabulary: Vocabulary) -> Refusal | None:
    """Why a word may not stand in the text (None: every word may): a sentence must start with a
    capital (or a word the inputs write so), and a word outside the inputs' and judging words
    must be a word of the inputs' scripts (`known_words`). The vocabulary's side is set lookups:
    texts decoded under a vocabulary-confined grammar pass on them alone."""
    starts, body = allowed_words(vocabulary)
    for sentence in text[:-1].split(". "):
        first = counted_words(sentence)[:1]
        if not first or (first[0] not in starts and not first[0][:1].isupper()):
            return Refusal("has a sentence that does not start with a capital")
    joined = next((w for w in WORD.findall(text) if _JOINED.fullmatch(w)), None)
    if joined is not None:
        return Refusal("runs words together at an apostrophe", repr(joined))
    outside = [
        word
        for word in (_POSSESSIVE.sub("", w) for w in WORD.findall(text))
        if any(part not in body and part not in starts for part in counted_words(word))
    ]
    if not outside:
        return None
    scripts = scripts_of(vocabulary.words)
    unknown = unknown_words(outside, scripts)
    if unknown:
        return Refusal("uses a word neither of the inputs nor of their language", repr(unknown[0]))
    return None


@functools.lru_cache(maxsize=4096)
def problem(
    text: str,
    max_words: int,
    vocabulary: Vocabulary,
    numbers_from: str,
    subject: str | None = None,
    verdict: bool | None = None,
    grounds: str | None = None,
    grounds_name: str | None = None,
) -> Refusal | None:
    """Why `text` is not shown to a person (None: it is). It may state the numbers the text
    `numbers_from` states (read only when it states one); a text about `subject` (the claim,
    the question, the facts) must share a content word with it; a reason for a `verdict` must
    not say the opposite of it, and must speak mostly of its subject; a reason affirming its
    verdict must speak mostly of what `grounds` (the text it says holds the fact) holds, and
    state only numbers `grounds` states: "The summary states that the shuttle crosses 1.5
    kilometers upstream" is false of a summary that gives no distance, however well it reads;
    nor may it give other numbers in place of its subject's. A reason affirming its verdict
    by quoting a sentence of `grounds` whole (`evidence.as_quote`, naming `grounds_name`,
    "source" or "summary") is true of it as it stands: it need only be about its subject, and
    the sentence of `grounds` closest to it."""
    quote = None
    if verdict and grounds is not None and grounds_name is not None:
        quote = quoted(text, grounds, grounds_name)
    if quote is not None:
        return None if subject is None else quote_problem(quote, subject, grounds or "")
    return _free_text_problem(text, max_words, vocabulary, numbers_from, subject, verdict, grounds)


def _free_text_problem(
    text: str,
    max_words: int,
    vocabulary: Vocabulary,
    numbers_from: str,
    subject: str | None,
    verdict: bool | None,
    grounds: str | None,
) -> Refusal | None:
    """`problem` for a text in the judge's own words."""
    # Cheap checks first: most texts a small model writes fail one of them (the order decides
    # only which problem is named, never whether there is one).
    if not _SHAPE.fullmatch(text):
        return Refusal("is not whole sentences of words and numbers")
    words = WORD.findall(text.lower())
    meaningful = content_set(text)
    if len(words) < MIN_WORDS or len(meaningful) < MIN_CONTENT_WORDS:
        return Refusal("is too short to say anything")
    last = _LAST_TOKEN.search(text.lower())
    if last is not None and last.group() in _DANGLING:
        return Refusal("ends on a word a sentence cut short ends on", repr(last.group()))
    if _JUDGING_TERMS.isdisjoint(words):
        return Refusal("says nothing about the source, the summary or the verdict")
    if subject is not None and stems(meaningful).isdisjoint(content_stems(subject)):
        return Refusal("is not about what it judges")
    if text.startswith(QUESTION_FRAME):
        return Refusal("copies a question instead of giving a reason")
    if _loops(_WORD_OR_NUMBER.findall(text.lower())):
        return Refusal("repeats itself")
    if len(counted_words(text)) >= max_words:
        return Refusal("ended only at its word bound")
    if any(len(counted_words(sentence)) < MIN_SENTENCE_WORDS for sentence in text.split(". ")):
        return Refusal("has a sentence too short to say anything")
    word_problem = _word_problem(text, vocabulary)
    if word_problem is not None:
        return word_problem
    stated = numbers_stated(text)
    if stated and stated - numbers_stated(numbers_from):
        return Refusal("states a number the figures do not hold")
    if verdict is not None and subject is not None:
        disagreement = _disagreement(words, meaningful, subject, verdict)
        if disagreement is not None:
            return disagreement
    if verdict and grounds is not None:
        if _unfounded(meaningful, grounds):
            return Refusal("says its text holds what it does not")
        if stated - numbers_stated(grounds):
            return Refusal("states a number its text does not hold")
        if subject is not None and _substitutes(words, stated, subject):
            return Refusal("gives another number in place of one it judges")
    return None


def _substitutes(words: Sequence[str], stated: frozenset[str], subject: str) -> bool:
    """Whether an affirming reason says the texts agree while giving other numbers in place of
    its subject's: "the source states that the soup serves six ..., which matches the summary"
    for a claim that it serves eight, or "the summary mentions April 12, which directly answers
    the question" for a question about April 5. Without a word of agreement ("matches",
    "answers", "confirms", ...) a reason may well state numbers of other facts than its
    subject's ("the summary states that traffic uses the Mill Road crossing from April 3" for a
    question about the crossing's distance), so it is not refused."""
    own = numbers_stated(subject)
    return bool(stated - own) and bool(own - stated) and not _AFFIRMING.isdisjoint(words)


def _unfounded(meaningful: frozenset[str], grounds: str) -> bool:
    """Whether an affirming reason speaks mostly of what `grounds` does not hold. "The summary
    states that engineers inspected the bridge in January" for a summary that names no
    engineer is false, however readable: a judge restating its question reads as one reporting
    the summary."""
    own = meaningful - _NEUTRAL
    held = content_stems(grounds)
    return bool(own) and sum(stem(w) in held for w in own) < MIN_ON_SUBJECT * len(own)


def _loops(words: Sequence[str]) -> bool:
    """A run of LOOP_WORDS words written twice, or a run of up to three written twice in a row
    ("the the", "sailed and sailed and")."""
    runs = list(zip(*(words[i:] for i in range(LOOP_WORDS)), strict=False))
    if len(set(runs)) < len(runs):
        return True
    return any(
        words[i : i + n] == words[i + n : i + 2 * n]
        for n in (1, 2, 3)
        for i in range(len(words) - 2 * n + 1)
    )


def _denials(words: Sequence[str]) -> Counter[str]:
    return Counter(w for w in words if w in _DENYING or w.endswith(("n't", "n\u2019t")))


def _disagreement(
    words: Sequence[str], meaningful: frozenset[str], subject: str, verdict: bool
) -> Refusal | None:
    """Why a reason does not fit its verdict and subject (None: it does). A denying word the
    subject also writes is the subject's own: "patients will not need to re-register" restates
    a claim that says so, it does not deny it."""
    denies = bool(_denials(words) - _denials(WORD.findall(subject.lower())))
    if verdict and denies:
        return Refusal("denies what its verdict affirms")
    if not verdict and not denies and not _AFFIRMING.isdisjoint(words):
        return Refusal("affirms what its verdict denies")
    own = meaningful - JUDGING_WORDS
    on_subject = content_stems(subject)
    if own and sum(stem(w) in on_subject for w in own) < MIN_ON_SUBJECT * len(own):
        return Refusal("speaks mostly of something other than what it judges")
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
    vocabulary: Vocabulary,
    max_words: int,
    numbers_from: Callable[[Verdict], str],
    subject: Callable[[Verdict], str],
    positive: Callable[[Verdict], bool],
    write: Callable[[Verdict], str],
    judged: int,
    grounds: str,
    grounds_name: str,
) -> tuple[list[Verdict], tuple[Author, ...]]:
    """Each verdict with the judge's reason if it may be shown, else with `write`'s sentence;
    verdicts from position `judged` on were filled in by the product already."""
    kept: list[Verdict] = []
    authors: list[Author] = []
    for index, verdict in enumerate(verdicts):
        if index >= judged:
            kept.append(verdict)
            authors.append("product")
        elif (
            noted(
                problem(
                    verdict.reason,
                    max_words,
                    vocabulary,
                    numbers_from(verdict),
                    subject(verdict),
                    positive(verdict),
                    grounds,
                    grounds_name,
                ),
                verdict.reason,
                subject(verdict),
            )
            is None
        ):
            kept.append(verdict)
            authors.append("model")
        else:
            kept.append(with_reason(verdict, write(verdict)))
            authors.append("product")
    return kept, tuple(authors)


def claim_reasons(
    claims: Sequence[ClaimVerdict],
    vocabulary: Vocabulary,
    inputs: str,
    max_words: int,
    source: str,
) -> tuple[list[ClaimVerdict], tuple[Author, ...]]:
    """Each claim with the judge's reason if it may be shown, else the product's sentence.
    A reason may state the numbers of `inputs` (the source and the summary); one for a
    supported claim speaks of what the `source` holds."""
    return _vet(
        claims,
        vocabulary,
        max_words,
        lambda _: inputs,
        lambda verdict: verdict.claim,
        lambda verdict: verdict.supported,
        _claim_sentence,
        judged=len(claims),
        grounds=source,
        grounds_name="source",
    )


def coverage_reasons(
    verdicts: Sequence[QuestionVerdict],
    vocabulary: Vocabulary,
    inputs: str,
    max_words: int,
    judged: int,
) -> tuple[list[QuestionVerdict], tuple[Author, ...]]:
    """As `claim_reasons`, with the numbers of `inputs` (the summary) and of the question, and
    what the summary holds; a reason speaks of its question alone (one that quotes other parts
    of the summary argues for a verdict the quote does not bear). Verdicts from position
    `judged` on stand for ones the judge never returned."""
    return _vet(
        verdicts,
        vocabulary,
        max_words,
        lambda verdict: f"{inputs}\n{verdict.question}",
        lambda verdict: verdict.question,
        lambda verdict: verdict.answered,
        _coverage_sentence,
        judged,
        grounds=inputs,
        grounds_name="summary",
    )
