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
    verdict of false keeps the schema's free text. Both branches open with the same verdict
    point, so P(true) is read from the same tokens as without quotes."""
    properties = schema["properties"]
    verdict = next(iter(properties))
    affirmed = {**properties, verdict: {"const": True}, "reason": {"enum": list(quotes)}}
    denied = {**properties, verdict: {"const": False}}
    return {"anyOf": [{**schema, "properties": affirmed}, {**schema, "properties": denied}]}


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
    in common is evidence for part of it, and is shown."""
    if not _WHOLE_SENTENCE.search(quote):
        return Refusal("quotes a line that is not a whole sentence", repr(quote[-20:]))
    wanted = content_stems(subject)
    shared = len(content_stems(quote) & wanted)
    if not shared:
        return Refusal("is not about what it judges")
    closest = max(len(content_stems(s) & wanted) for s in claims_of(grounds))
    if 2 * shared < closest:
        return Refusal("quotes a sentence further from what it judges than another")
    return None
