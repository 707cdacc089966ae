"""Quoted evidence: a verdict's reason given as the sentence of its text it rests on.

With `quote_evidence`, a claim judged supported gives a sentence of the source as its reason and
a question judged answered a sentence of the summary, each whole and chosen from a list the
grammar offers: a reason that cannot word a fact its text does not state, and that a reader can
check. This module builds the quotes, the schema branch that offers them, recognises a quote in
an answer, and says when a quote is not shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from offline_scorer.scorers.summarization.grounding import claims_of
from offline_scorer.scorers.summarization.refusal import Refusal
from offline_scorer.scorers.summarization.stems import content_stems


def as_quote(sentence: str, text: str) -> str:
    """The reason that gives a sentence of `text` ("source" or "summary") as the evidence for
    a verdict: "The summary says: "..."", the sentence whole."""
    return f'The {text} says: "{sentence}"'


def quoted(reason: str, grounds: str, text: str) -> str | None:
    """The sentence of `grounds` (the `text` named, "source" or "summary") that `reason`
    quotes whole in `as_quote`'s frame, else None: a reason that is such a quote is true of
    that text whatever the judge understood."""
    frame = f'The {text} says: "'
    if not (reason.startswith(frame) and reason.endswith('"')):
        return None
    sentence = reason[len(frame) : -1]
    return sentence if sentence in claims_of(grounds) else None


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


def quotable(subject: str, grounds: str) -> tuple[str, ...]:
    """The sentences of `grounds` a quote about `subject` may give: those `quote_problem`
    would show. The grammar offers only these, so a judge that affirms a verdict points to a
    sentence that speaks of what it judges, and chooses which; none offered, it words its
    reason as for a verdict of false."""
    closest = _closest(subject, grounds)
    return tuple(s for s in claims_of(grounds) if _sentence_problem(s, subject, closest) is None)


# a sentence's end, with any closing marks after it
_WHOLE_SENTENCE = re.compile(r"[.!?][\"')\]\u2019\u201d]*$")


def quote_problem(quote: str, subject: str, grounds: str) -> Refusal | None:
    """Why a quoted sentence of `grounds` is not shown as the evidence about `subject`: it
    shares none of its content words, or another sentence shares more than twice as many (a
    quote of the summary's traffic sentence, one word in common, for a question about how long
    a bridge stays shut, where another sentence gives the year and the weeks, is true of the
    summary and points its reader away from the evidence), or it is a line that does not end
    as a sentence does (a dialogue's "ok see you then"). A claim or question of several
    facts is often borne out by no one sentence: a quote with half the best sentence's words
    in common is evidence for part of it, and is shown. The grammar offers only the quotes
    this shows (`quotable`); the check stands for recordings and judges that did not have
    that grammar."""
    return _sentence_problem(quote, subject, _closest(subject, grounds))


def _closest(subject: str, grounds: str) -> int:
    """How many content words the sentence of `grounds` closest to `subject` shares with it."""
    wanted = content_stems(subject)
    return max((len(content_stems(s) & wanted) for s in claims_of(grounds)), default=0)


def _sentence_problem(sentence: str, subject: str, closest: int) -> Refusal | None:
    if not _WHOLE_SENTENCE.search(sentence):
        return Refusal("quotes a line that is not a whole sentence", repr(sentence[-20:]))
    shared = len(content_stems(sentence) & content_stems(subject))
    if not shared:
        return Refusal("is not about what it judges")
    if 2 * shared < closest:
        return Refusal("quotes a sentence further from what it judges than another")
    return None
