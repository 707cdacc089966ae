"""Mastra's summarization scorer, recognised on the wire and decoded under our grounding.

`createSummarizationScorer` (@mastra/evals 1.10.2; prompts quoted in tests/data/mastra/README.md)
sends three requests per evaluation. A small model answering them freely copies the claims of
the prompt's worked example and writes no questions, so when a request is one of those three,
recognised by their fixed text, it is decoded under the same grounded constraints as the
library's own scorer:

* preprocess: one verdict per summary sentence, echoing it (claims are the summary's sentences),
  and questions chosen from the source's fact-stating sentences;
* analyze: one verdict per listed question, in order, echoing it;
* reason: "The score is <the given score> because ..." as one bounded sentence that states no
  other number, shown to Mastra only if it passes the library's reader checks
  (`mastra_reason`);

and in every step no free text copies a run of the prompt's fixed text (its instructions and
worked examples).

The messages the model sees stay exactly what Mastra sent. A request whose text does not match
(another Mastra version, another scorer) falls back to the schema it carries, which is what
`docs/serve.md` promises; nothing here guesses.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from offline_scorer.judging.protocol import Message, SamplingSettings
from offline_scorer.models.registry import ModelSpec
from offline_scorer.scorers.summarization.grounding import claims_of
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.prompts import (
    candidates_of,
    preprocess_vocabulary,
    sampling,
)
from offline_scorer.scorers.summarization.schemas import (
    NO_DIGITS_PATTERN,
    QuestionChoice,
    coverage_schema,
    preprocess_schema,
    word_bounds,
)
from offline_scorer.scorers.summarization.sentence import (
    citing_numbers,
    open_pattern,
    vocabulary_of,
)
from offline_scorer.serve.mastra_reason import (
    REASON_START,
    axis_clause,
    parts,
    read_given,
    reason_vocabulary,
    shown_reason,
)

__all__ = ["MASTRA_VERSIONS", "Grounded", "recognise", "served_options"]

MASTRA_VERSIONS = ("@mastra/evals 1.10.2",)
"""The versions whose prompt text is recognised (tested against the real package)."""

SYSTEM_START = "You are a strict summarization evaluator."

_PRE_START = "Complete two independent parts.\n\nPart 1 (alignment): "
_PRE_MAX = re.compile(r"write at most (\d+) closed-ended questions")
_PRE_SOURCE = "\n\nSource Text:\n"
_SUMMARY = "\n\nSummary:\n"
_PRE_END = "\n\nJSON:\n"

_ANA_START = (
    "Decide whether each question can be answered from the summary below. The summary is the "
    "only evidence you have, and you must not rely on prior knowledge.\n\nSummary:\n"
)
_ANA_COUNT = re.compile(r"\n\nNumber of questions: (\d+)\n\nQuestions:\n")
_ANA_END = '\n\nSet "answered" to true only when the summary holds enough information'

_REA_SCORE = re.compile(r"\n\nScore: (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?) out of ")
REASON_MAX_CHARS = 240
_REGEX_SPECIAL = re.compile(r"([\\.^$*+?()\[\]{}|/])")
_NO_DIGITS = NO_DIGITS_PATTERN.removeprefix("^[^").removesuffix("]*$")


@dataclass(frozen=True)
class Grounded:
    """How to decode one recognised request: its step, schema and sampling, whether the
    answer is a JSON string whose value is the reply text (the free-text reason step), and
    what the client is shown of that text (`shown`: the judge's if it passes the reader
    checks, else the product's sentence, marked)."""

    step: str
    schema: dict[str, Any]
    sampling: SamplingSettings
    text_reply: bool = False
    shown: Callable[[str], str] | None = None


def served_options(spec: ModelSpec) -> ScorerOptions:
    """The summarization options the served judge's registry entry sets: how its free text is
    decoded and the threshold of its coverage verdicts, as the library's scorer uses them on
    the same judge (`scorer_options`), except where the entry measured Mastra's form of the
    requests apart (`served_options`). Mastra's requests are not split, so `one_by_one`,
    `quote_evidence` (which quotes for one question at a time) and `coverage_baseline` (one
    question at a time too; with it goes the threshold, on the baseline's scale) do not
    apply. A value no
    scorer accepts is a one-line ConfigError when the server starts."""
    own = {**spec.scorer_options.get("summarization", {})}
    own.pop("one_by_one", None)
    own.pop("quote_evidence", None)
    if own.pop("coverage_baseline", False):  # its threshold reads P' against the baseline
        own.pop("coverage_threshold", None)
    return ScorerOptions.from_mapping({**own, **spec.served_options.get("summarization", {})})


def recognise(messages: Sequence[Message], options: ScorerOptions | None = None) -> Grounded | None:
    """The grounded decoding for Mastra's summarization prompts; None for any other request.

    Reasons are decoded in the judge's free-text style, claim and coverage verdicts committed
    at its claim and coverage thresholds (`options`, from `served_options`). Under the guarded
    styles, free text in every step (the verdicts' reasons, the explanation) may not copy a run
    of the prompt's fixed text: Mastra's worked examples ("95% accuracy, which contradicts
    99%") are what a small model would otherwise write about any pair.
    """
    if len(messages) != 2 or messages[0].role != "system" or messages[1].role != "user":
        return None
    system = messages[0].content
    if not system.startswith(SYSTEM_START):
        return None
    user = messages[1].content
    options = options or ScorerOptions()
    style = options.free_text
    if user.startswith(_PRE_START):
        return _preprocess(system, user, options)
    if user.startswith(_ANA_START):
        return _analyze(system, user, style, options.coverage_threshold)
    if user.startswith(REASON_START):
        return _reason(system, user, style)
    return None


def _guarded(
    step: str, fixed: Sequence[str], style: str, threshold: float | None = None
) -> SamplingSettings:
    """The library's settings for `step` in `style`; where it guards free text, kept off the
    prompt's fixed text too."""
    settings = sampling(step, style, threshold)
    if not settings.no_repeat_ngram:
        return settings
    return replace(settings, no_copy=tuple(part for part in fixed if part.strip()))


def _preprocess(system: str, user: str, options: ScorerOptions) -> Grounded | None:
    cap = _PRE_MAX.search(user)
    end = user.find(_PRE_END)
    start = user.find(_PRE_SOURCE, user.rfind("\n}"))  # the inputs follow the worked example
    if cap is None or end < 0 or start < 0:
        return None
    inputs = user[start + len(_PRE_SOURCE) : end]
    cut = inputs.rfind(_SUMMARY)  # a source holding that line is likelier than a summary
    if cut < 0:
        return None
    source, summary = inputs[:cut], inputs[cut + len(_SUMMARY) :]
    vocabulary = citing_numbers(preprocess_vocabulary(source, summary), source, summary)
    style, cut_at_clock = options.free_text, options.clock_always_ends
    claims = claims_of(summary, clock_always_ends=cut_at_clock)
    count = int(cap.group(1))
    candidates = candidates_of(source, count, options.questions, cut_at_clock)
    choice = QuestionChoice(candidates, count)
    schema = preprocess_schema(claims, choice, vocabulary, style, layout="interleaved")
    fixed = (system, user[: start + len(_PRE_SOURCE)], user[end:])
    settings = _guarded("preprocess", fixed, style, options.claim_threshold)
    return Grounded("preprocess", schema, settings)


def _analyze(system: str, user: str, style: str, threshold: float | None) -> Grounded | None:
    count = _ANA_COUNT.search(user)
    end = user.find(_ANA_END)
    if count is None or end < 0:
        return None
    listed = user[count.end() : end]
    questions = _numbered(listed, int(count.group(1)))
    if questions is None:
        return None
    fixed = (system, _ANA_START, user[end:])
    # the summary and the questions
    vocabulary = citing_numbers(vocabulary_of(user), user[len(_ANA_START) : count.start()], listed)
    schema = coverage_schema(questions, vocabulary, style, layout="interleaved")  # Mastra's
    return Grounded("analyze", schema, _guarded("analyze", fixed, style, threshold))


def _numbered(block: str, count: int) -> list[str] | None:
    """`[0] Q0\\n[1] Q1...` back into its questions; None unless exactly `count` are there."""
    if count == 0:
        return [] if block == "" else None
    if not block.startswith("[0] "):
        return None
    questions = []
    rest = block[len("[0] ") :]
    for i in range(1, count):
        marker = f"\n[{i}] "
        at = rest.find(marker)
        if at < 0:
            return None
        questions.append(rest[:at])
        rest = rest[at + len(marker) :]
    questions.append(rest)
    return questions


def _reason(system: str, user: str, style: str) -> Grounded | None:
    score = _REA_SCORE.search(user)
    found = parts(user)
    if score is None or found is None:
        return None
    given, rules = found
    result = read_given(given, rules, style)
    if result is None:
        return None
    # Mastra's opening, then the axis that limits the score as its worked examples name it
    # (computed from the figures Mastra sent: the default judge left to infer it named the
    # wrong one for 11 of the 12 fixtures), then the judge's explanation
    opening = " ".join(
        filter(None, (f"The score is {score.group(1)} because", axis_clause(result)))
    )
    if style == "open":
        # whole sentences in the words of the inputs, the listed claims and questions and the
        # prompt's rules (not of its worked examples, which a judge would otherwise retell:
        # "leaves out both the employee count and the relocation date"), and only the numbers
        # of the figures and the listed claims and questions
        vocabulary = reason_vocabulary(given, rules)
        pattern = open_pattern(word_bounds(style)[1], vocabulary, opening, confined=True)
    else:
        # the explanation goes on after a separator: ": the summary ...", not "axiss"
        joined = "(?:: |, | )" if axis_clause(result) else " "
        headline = _REGEX_SPECIAL.sub(r"\\\1", opening) + joined
        pattern = f"^{headline}[^{_NO_DIGITS}]{{1,{REASON_MAX_CHARS}}}[.!?]$"
    end = len(REASON_START) + len(given)
    settings = _guarded("reason", (system, REASON_START, user[end:]), style)
    shown = functools.partial(shown_reason, result)
    schema = {"type": "string", "pattern": pattern}
    return Grounded("reason", schema, settings, text_reply=True, shown=shown)
