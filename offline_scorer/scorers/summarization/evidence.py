"""Quoted evidence: a verdict's reason given as the sentence of its text it rests on.

With `quote_evidence`, a claim judged supported gives a sentence of the source as its reason and
a question judged answered a sentence of the summary, each whole and chosen from a list the
grammar offers: a reason that cannot word a fact its text does not state, and that a reader can
check. This module builds the quotes, the schema branch that offers them, recognises a quote in
an answer, and says when a quote is not shown.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from offline_scorer.scorers.summarization.grounding import claims_of
from offline_scorer.scorers.summarization.refusal import Refusal, first_refusal
from offline_scorer.scorers.summarization.stems import content_stems


def as_quote(sentence: str, text: str) -> str:
    """The reason that gives a sentence of `text` ("source" or "summary") as the evidence for
    a verdict: "The summary says: "..."", the sentence whole."""
    return f'The {text} says: "{sentence}"'


QUOTES_CLOCK_ALWAYS_ENDS = False
"""How the sentences a quote may give are cut, whatever the scorer's `splitting`: a time's
"a.m."/"p.m." ends one only before a capital (`splitting` 2). Quotes have always been cut so
(a quote offered in a schema, and a quote recognised in any reason), so the recordings made
with them replay; every function here takes it explicitly, and callers pass this constant."""


def quoted(reason: str, grounds: str, text: str, *, clock_always_ends: bool) -> str | None:
    """The sentence of `grounds` (the `text` named, "source" or "summary") that `reason`
    quotes whole in `as_quote`'s frame, else None: a reason that is such a quote is true of
    that text whatever the judge understood."""
    frame = f'The {text} says: "'
    if not (reason.startswith(frame) and reason.endswith('"')):
        return None
    sentence = reason[len(frame) : -1]
    return sentence if sentence in claims_of(grounds, clock_always_ends=clock_always_ends) else None


def with_quotes(schema: dict[str, Any], quotes: Sequence[str]) -> dict[str, Any]:
    """A one-verdict schema whose verdict of true has one of `quotes` as its reason and whose
    verdict of false keeps the schema's free text; with no quotes, the schema as it is (the
    judge words every reason). Both branches open with the same verdict point, so P(true) is
    read from the same tokens as without quotes."""
    if not quotes:
        return schema
    properties = schema["properties"]
    verdict = next(iter(properties))
    affirmed = {**properties, verdict: {"const": True}, "reason": {"enum": list(quotes)}}
    denied = {**properties, verdict: {"const": False}}
    return {"anyOf": [{**schema, "properties": affirmed}, {**schema, "properties": denied}]}


@dataclass(frozen=True)
class Quote:
    """A sentence of `grounds` given as the evidence about `subject`, with the sentences of
    `grounds` cut as `clock_always_ends` says; what its checks share is computed once."""

    sentence: str
    subject: str
    grounds: str
    clock_always_ends: bool

    @functools.cached_property
    def shared(self) -> int:
        """How many content words (by stem) the sentence shares with the subject."""
        return len(content_stems(self.sentence) & content_stems(self.subject))

    @functools.cached_property
    def closest(self) -> int:
        """How many the sentence of `grounds` closest to the subject shares with it."""
        wanted = content_stems(self.subject)
        every = claims_of(self.grounds, clock_always_ends=self.clock_always_ends)
        return max((len(content_stems(s) & wanted) for s in every), default=0)


# a sentence's end, with any closing marks after it
_WHOLE_SENTENCE = re.compile(r"[.!?][\"')\]\u2019\u201d]*$")


def not_a_whole_sentence(q: Quote) -> Refusal | None:
    """A line that does not end as a sentence does (a dialogue's "ok see you then")."""
    if not _WHOLE_SENTENCE.search(q.sentence):
        return Refusal("quotes a line that is not a whole sentence", repr(q.sentence[-20:]))
    return None


def quote_not_about_subject(q: Quote) -> Refusal | None:
    """A quote sharing no content word with its claim or question is evidence of nothing."""
    if not q.shared:
        return Refusal("is not about what it judges")
    return None


def another_sentence_is_closer(q: Quote) -> Refusal | None:
    """Another sentence shares more than twice as many content words: a quote of the
    summary's traffic sentence, one word in common, for a question about how long a bridge
    stays shut, where another sentence gives the year and the weeks, is true of the summary
    and points its reader away from the evidence. A quote with half the best sentence's words
    in common is evidence for part of a claim of several facts, and is shown."""
    if 2 * q.shared < q.closest:
        return Refusal("quotes a sentence further from what it judges than another")
    return None


QUOTE_CHECKS: tuple[Callable[[Quote], Refusal | None], ...] = (
    not_a_whole_sentence,
    quote_not_about_subject,
    another_sentence_is_closer,
)
"""The table a quoted sentence given as evidence is checked by, in order."""


def quotable(subject: str, grounds: str, *, clock_always_ends: bool) -> tuple[str, ...]:
    """The sentences of `grounds` a quote about `subject` may give: those `quote_problem`
    would show. The grammar offers only these, so a judge that affirms a verdict points to a
    sentence that speaks of what it judges, and chooses which; none offered, it words its
    reason as for a verdict of false."""
    every = claims_of(grounds, clock_always_ends=clock_always_ends)
    return tuple(
        s
        for s in every
        if first_refusal(QUOTE_CHECKS, Quote(s, subject, grounds, clock_always_ends)) is None
    )


def quote_problem(
    quote: str, subject: str, grounds: str, *, clock_always_ends: bool
) -> Refusal | None:
    """Why a quoted sentence of `grounds` is not shown as the evidence about `subject`
    (`QUOTE_CHECKS`). The grammar offers only the quotes this shows (`quotable`); the check
    stands for recordings and judges that did not have that grammar."""
    return first_refusal(QUOTE_CHECKS, Quote(quote, subject, grounds, clock_always_ends))
