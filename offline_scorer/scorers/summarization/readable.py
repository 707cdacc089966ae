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
`Judge` answers without it, so the grammar's shape is checked too. Every text is checked the
same way whoever wrote it, by the ordered table of its kind (a reason:
`reason_checks.REASON_CHECKS`; a quote: `evidence.QUOTE_CHECKS`; the explanation:
`explanation_checks.EXPLANATION_CHECKS`); one that fails is replaced by a sentence the product
writes from the verdict itself, and the result says which texts are whose (`TextAuthors`).
The checks read only the answer and the inputs, so replay repeats them exactly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from offline_scorer.scorers.summarization.evidence import (
    QUOTES_CLOCK_ALWAYS_ENDS,
    quote_problem,
    quoted,
)
from offline_scorer.scorers.summarization.reason_checks import (
    REASON_CHECKS,
    Allowance,
    FreeText,
    Judging,
)
from offline_scorer.scorers.summarization.refusal import Refusal, first_refusal, noted
from offline_scorer.scorers.summarization.schemas import (
    ClaimVerdict,
    QuestionVerdict,
    with_reason,
)
from offline_scorer.scorers.summarization.sentence import Vocabulary

Author = Literal["model", "product"]
ALONE = Judging()
"""A text judged alone: no subject, verdict or grounds."""


@functools.lru_cache(maxsize=4096)
def problem(text: str, allowed: Allowance, judging: Judging = ALONE) -> Refusal | None:
    """Why `text` is not shown to a person (None: it is). It may state the numbers
    `allowed.numbers_from` states (read only when it states one); a text about a subject (the
    claim, the question, the facts) must share a content word with it; a reason for a verdict
    must not say the opposite of it, and must speak mostly of its subject; a reason affirming
    its verdict must speak mostly of what its grounds (the text it says holds the fact) hold,
    and state only numbers they state: "The summary states that the shuttle crosses 1.5
    kilometers upstream" is false of a summary that gives no distance, however well it reads;
    nor may it give other numbers in place of its subject's (`reason_checks.REASON_CHECKS`). A
    reason affirming its verdict by quoting a sentence of its grounds whole (`evidence.
    as_quote`, naming the grounds "source" or "summary") is true of it as it stands: it need
    only be about its subject, and the sentence of the grounds closest to it
    (`evidence.QUOTE_CHECKS`)."""
    subject, grounds, name = judging.subject, judging.grounds, judging.grounds_name
    quote = None
    if judging.verdict and grounds is not None and name is not None:
        quote = quoted(text, grounds, name, clock_always_ends=QUOTES_CLOCK_ALWAYS_ENDS)
    if quote is not None:
        if subject is None:
            return None
        return quote_problem(
            quote, subject, grounds or "", clock_always_ends=QUOTES_CLOCK_ALWAYS_ENDS
        )
    return first_refusal(REASON_CHECKS, FreeText(text, allowed, judging))


def _claim_sentence(verdict: ClaimVerdict) -> str:
    if verdict.supported:
        return "The judge found that the source supports this claim."
    return "The judge found that the source does not support this claim."


def _coverage_sentence(verdict: QuestionVerdict) -> str:
    if verdict.answered:
        return "The judge found that the summary answers this question."
    return "The judge found that the summary does not answer this question."


Verdict = TypeVar("Verdict", ClaimVerdict, QuestionVerdict)


@dataclass(frozen=True)
class _Vetting(Generic[Verdict]):
    """How one step's reasons are vetted: the words they may use and their bound, and, per
    verdict, the text whose numbers a reason may state, its subject, whether the verdict is
    positive and the product's sentence that replaces a refused reason; `grounds` (named
    `grounds_name`) is the text an affirming reason speaks of."""

    vocabulary: Vocabulary
    max_words: int
    numbers_from: Callable[[Verdict], str]
    subject: Callable[[Verdict], str]
    positive: Callable[[Verdict], bool]
    write: Callable[[Verdict], str]
    grounds: str
    grounds_name: str

    def problem(self, verdict: Verdict) -> Refusal | None:
        """Why the verdict's reason may not be shown (None: it may), told to `refusal.noted`."""
        allowed = Allowance(self.max_words, self.vocabulary, self.numbers_from(verdict))
        subject = self.subject(verdict)
        judging = Judging(subject, self.positive(verdict), self.grounds, self.grounds_name)
        return noted(problem(verdict.reason, allowed, judging), verdict.reason, subject)


def _vet(
    verdicts: Sequence[Verdict], vetting: _Vetting[Verdict], judged: int
) -> tuple[list[Verdict], tuple[Author, ...]]:
    """Each verdict with the judge's reason if it may be shown, else with the product's
    sentence; verdicts from position `judged` on were filled in by the product already."""
    kept: list[Verdict] = []
    authors: list[Author] = []
    for index, verdict in enumerate(verdicts):
        if index >= judged:
            kept.append(verdict)
            authors.append("product")
        elif vetting.problem(verdict) is None:
            kept.append(verdict)
            authors.append("model")
        else:
            kept.append(with_reason(verdict, vetting.write(verdict)))
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
    vetting: _Vetting[ClaimVerdict] = _Vetting(
        vocabulary,
        max_words,
        numbers_from=lambda _: inputs,
        subject=lambda verdict: verdict.claim,
        positive=lambda verdict: verdict.supported,
        write=_claim_sentence,
        grounds=source,
        grounds_name="source",
    )
    return _vet(claims, vetting, judged=len(claims))


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
    vetting: _Vetting[QuestionVerdict] = _Vetting(
        vocabulary,
        max_words,
        numbers_from=lambda verdict: f"{inputs}\n{verdict.question}",
        subject=lambda verdict: verdict.question,
        positive=lambda verdict: verdict.answered,
        write=_coverage_sentence,
        grounds=inputs,
        grounds_name="summary",
    )
    return _vet(verdicts, vetting, judged)
