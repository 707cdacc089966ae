"""The three judging prompts, in one place.

Every call of the three steps shares one system message (the matching rules), so a model runtime
can keep that prefix in its KV cache between calls. Each user message states its task, then
gives the real inputs; in the "open" free-text style (capable judges) it gives the inputs first
and the task last, which is where such a judge's answer keeps its signal. A scorer that judges
one claim or one question per request (`one_by_one`) asks each as a user would, under the
model's own system prompt, the long texts first so that they are a shared prefix. There are no
worked examples: a small model copies them into its answer, and the output schema already fixes
the format (a grammar enforces it during decoding). Claims and questions are cut from the texts
themselves (see `grounding`), so the prompts list the claims to judge and say how questions are
made. The coverage prompt is built from the summary and the questions only: the source never
reaches it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import replace

from offline_scorer.judging.protocol import JudgeRequest, Message, SamplingSettings
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.evidence import (
    QUOTES_CLOCK_ALWAYS_ENDS,
    as_quote,
    quotable,
)
from offline_scorer.scorers.summarization.facts import fact_questions
from offline_scorer.scorers.summarization.grounding import (
    QUESTION_FRAME,
    claims_of,
    question_candidates,
)
from offline_scorer.scorers.summarization.schemas import (
    ClaimCheck,
    Layout,
    QuestionChoice,
    check_schema,
    coverage_schema,
    layout_of,
    preprocess_schema,
    questions_schema,
    reason_schema,
)
from offline_scorer.scorers.summarization.sentence import Vocabulary, vocabulary_of

SYSTEM = """You are a strict, careful judge of summaries. You answer with JSON only.
Rules you always follow:
- Judge only from the text you are given, never from prior knowledge.
- Dates, numbers, names and domain terms must match exactly: "about 2020" does not support "2020".
- Paraphrase is fine. A weaker or stronger claim is not the same claim."""

_PREPROCESS = """Task, in two parts.
Part 1: the CLAIMS below are the sentences of the SUMMARY. For each claim, in order, set \
"supported" to true only when the SOURCE states it or directly implies it; set it to false when \
the SOURCE contradicts it or does not contain it. {give_reasons}
Part 2: independently of the summary, choose the {count} most important facts of the SOURCE. \
Each becomes a closed question made from one SOURCE sentence: "{frame}<sentence>?", listed in \
the order the sentences appear in the SOURCE.

SOURCE:
{source}

SUMMARY:
{summary}

CLAIMS:
{claims}"""

_PREPROCESS_OPEN = """SOURCE:
{source}

SUMMARY:
{summary}

CLAIMS (the sentences of the SUMMARY):
{claims}

Task, in two parts.
Part 1: for each claim, in order, is every fact in it supported by the SOURCE? Set "supported" \
to true only when the SOURCE states it or directly implies it; set it to false when the SOURCE \
contradicts it or does not contain it. {give_reasons}
Part 2: independently of the summary, choose the {count} most important facts of the SOURCE. \
Each becomes a closed question made from one SOURCE sentence: "{frame}<sentence>?", listed in \
the order the sentences appear in the SOURCE."""
"""The "open" style's preprocess prompt: the inputs first, then the task. With the task before
a long source, Qwen2.5-Coder-0.5B's weakest-claim P(true) fell to ROC AUC 0.60 on 34 news rows,
against 0.80-0.83 with the inputs first (docs/judges.md); a judge that reads the question last
answers it. SmolLM2 keeps the task-first prompt its recordings were made with."""

_QUESTIONS = """Document:
{source}

Task: choose the {count} most important facts of the document. Each becomes a closed question \
made from one document sentence: "{frame}<sentence>?", listed in the order the sentences appear \
in the document."""
"""When each claim is judged on its own: the questions, from the source alone. It opens as
every claim's request does, so the source read here is the prefix the claims' requests reuse."""

_CLAIM = """Document:
{source}

Summary:
{summary}

Sentence of the summary:
{claim}

Is every fact in this sentence supported by the document? Answer in JSON."""
"""One claim judged alone, after the source and the whole summary (which says what its
pronouns refer to). Asked this way, sentence by sentence, Qwen2.5-Coder-0.5B's weakest P(true)
gave ROC AUC 0.711 on judge-dev-news.jsonl against 0.623 with every claim in one answer and
0.637 for one plain read of the pair (docs/judges.md); with our system rules it gave 0.663, and
with the claim echoed in the answer before its verdict 0.677. Requests differ only after the
summary, so a runtime that keeps its prompt prefix reads the source and the summary once per
evaluation."""

_ANALYZE = """Task: for each QUESTION, decide whether the SUMMARY alone answers it with "yes". \
Set "answered" to true only when the SUMMARY states the fact the question asks about; set it to \
false when the SUMMARY leaves the fact out or says something different. Answer every question, \
in the order given, copying each question exactly. {give_reasons}

SUMMARY:
{summary}

QUESTIONS:
{questions}"""

_ANALYZE_OPEN = """SUMMARY:
{summary}

QUESTIONS:
{questions}

Task: for each QUESTION, does the SUMMARY alone answer it with "yes"? Set "answered" to true \
only when the SUMMARY states the fact the question asks about; set it to false when the \
SUMMARY leaves the fact out or says something different. Answer every question, in the order \
given, copying each question exactly. {give_reasons}"""
"""The "open" style's coverage prompt: the inputs first, then the task, as in preprocess."""

_REASON = """Task: explain this score to a reader in one or two sentences of your own. Say which \
axis limits the score and why, using the unsupported claims and unanswered questions below. Do \
not write any digits: the numbers are reported separately.

{facts}"""

_REASON_OPEN = """Task: explain this score to a reader in one or two sentences of your own. \
Say which axis limits the score and why, using the unsupported claims and unanswered \
questions below. State a number only as it is given here.

{facts}"""
"""The "open" style's reason prompt: its grammar admits digits, so it asks for true ones."""

_GIVE_REASONS: dict[Layout, str] = {
    "interleaved": "Give a short reason.",
    "verdicts-first": 'Give every verdict first; then, under "reasons", one short reason for '
    "each {item}, in the same order.",
}
"""How each answer layout asks for reasons (the interleaved wording is the "bounded" style's
recorded requests', byte for byte: a change misses every such record)."""


_GIVE_OPEN_REASONS = (
    'Give every verdict first; then, under "reasons", one short sentence for each {item}, in the '
    "same order, saying what the {text} states about it."
)
"""The "open" style's wording: each reason is one sentence that starts with "The {text}"."""


def _give_reasons(style: str, item: str, text: str) -> str:
    if style == "open":
        return _GIVE_OPEN_REASONS.format(item=item, text=text)
    return _GIVE_REASONS[layout_of(style)].format(item=item)


# Output budgets in tokens. Each is above what the step's grammar can emit for typical text
# (reason: above its worst case, every character an escape pair); an answer that still reaches
# its budget fails the evaluation rather than being cut. They enter cassette keys.
PREPROCESS_MAX_TOKENS = 2048
ANALYZE_MAX_TOKENS = 1536
REASON_MAX_TOKENS = 512
SEED = 0


# Free text may not repeat a run of this many tokens, nor copy one from the instructions.
NO_REPEAT_NGRAM = 4


def instructions(template: str) -> tuple[str, ...]:
    """The fixed text of a prompt (system message and task), which an answer may not copy."""
    return (SYSTEM, *(part for part in re.split(r"\{[a-z_]+\}", template) if part.strip()))


REQUESTS_KEPT = 128
"""Requests each builder keeps: a re-scored suite of up to this many documents is built once.
Bounded because a request holds its texts and a vocabulary pattern as long as they are."""


def _sampling(max_tokens: int, no_copy: tuple[str, ...] = ()) -> SamplingSettings:
    return SamplingSettings(
        temperature=0.0,
        seed=SEED,
        max_tokens=max_tokens,
        no_repeat_ngram=NO_REPEAT_NGRAM,
        no_copy=no_copy,
    )


SAMPLING: dict[str, SamplingSettings] = {
    "preprocess": _sampling(PREPROCESS_MAX_TOKENS),
    "analyze": _sampling(ANALYZE_MAX_TOKENS),
    "reason": _sampling(REASON_MAX_TOKENS, no_copy=instructions(_REASON)),
}
"""Each step's sampling settings: fixed, so they are part of what decides a result."""

OPEN_SAMPLING: dict[str, SamplingSettings] = {
    step: SamplingSettings(temperature=0.0, seed=SEED, max_tokens=settings.max_tokens)
    for step, settings in SAMPLING.items()
}
"""The "open" style's: no loop or copy guard. The guard keeps a small model from looping, but a
capable judge's reasons rightly repeat their openings ("The summary does not state ...") and
quote the inputs, and under the guard it misspells words to get past a ban ("summmary"). A
judge that loops anyway hits its word bound, and the readability checks replace the text."""


def sampling(step: str, style: str, threshold: float | None = None) -> SamplingSettings:
    """A step's sampling settings under a free-text style; `threshold`, when given, is the
    P(true) at which the step's verdicts are committed (instead of the judge's own)."""
    settings = (OPEN_SAMPLING if style == "open" else SAMPLING)[step]
    return settings if threshold is None else replace(settings, verdict_threshold=threshold)


def _request(
    step: str, user: str, schema: dict, settings: SamplingSettings, *, rules: bool = True
) -> JudgeRequest:
    """A request of `step` sampled with `settings` (`sampling`); `rules=False` sends the user
    message alone, under the model's own system prompt: a one-verdict request asked so, as a
    user would ask it, kept the most of Qwen2.5-Coder-0.5B's signal (docs/judges.md)."""
    system = (Message("system", SYSTEM),) if rules else ()
    return JudgeRequest(
        step=step,
        messages=(*system, Message("user", user)),
        output_schema=schema,
        sampling=settings,
    )


@functools.lru_cache(maxsize=REQUESTS_KEPT)
def _quotes(subject: str, text: str, name: str, wanted: bool) -> tuple[str, ...]:
    """The reasons quoting each sentence of `text` (named `name`) that may be evidence about
    `subject` (`quotable`, its sentences cut as quotes always are), when quotes are `wanted`."""
    if not wanted:
        return ()
    found = quotable(subject, text, clock_always_ends=QUOTES_CLOCK_ALWAYS_ENDS)
    return tuple(as_quote(s, name) for s in found)


def _listed(items: Sequence[str], empty: str) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1)) or empty


def preprocess_vocabulary(source: str, summary: str) -> Vocabulary:
    """The words a preprocess answer's reasons may use; the scorer checks them against it."""
    return vocabulary_of(source, summary)


def analyze_vocabulary(summary: str, questions: Sequence[str]) -> Vocabulary:
    """The words a coverage answer's reasons may use (its prompt never shows the source)."""
    return vocabulary_of(summary, *questions)


def reason_vocabulary(facts: str) -> Vocabulary:
    """The words the explanation may use."""
    return vocabulary_of(facts)


def candidates_of(
    source: str, max_questions: int, unit: str, clock_always_ends: bool
) -> tuple[str, ...]:
    """The questions a judge may ask of `source`: every fact-stating sentence (`unit`
    "sentences", the judge choosing up to `max_questions`), or the `max_questions` facts of
    most weight ("facts", see `facts`)."""
    if unit == "facts":
        return fact_questions(source, max_questions, clock_always_ends=clock_always_ends)
    return question_candidates(source, clock_always_ends=clock_always_ends)


@functools.lru_cache(maxsize=REQUESTS_KEPT)
def preprocess_request(
    source: str, summary: str, max_questions: int, asking: Asking
) -> JudgeRequest:
    """The preprocess request (cached, like each step's: a request is a pure function of its
    arguments, read-only, and a process re-scoring a suite builds the same ones again)."""
    style, cut = asking.style, asking.clock_always_ends
    claims = claims_of(summary, clock_always_ends=cut)  # a blank one has none
    candidates = candidates_of(source, max_questions, asking.unit, cut)
    layout = layout_of(style)
    template = _PREPROCESS_OPEN if style == "open" else _PREPROCESS
    user = template.format(
        source=source,
        summary=summary,
        claims=_listed(claims, "(no claims)"),
        count=min(max_questions, len(candidates)),
        frame=QUESTION_FRAME,
        give_reasons=_give_reasons(style, "claim", "SOURCE"),
    )
    vocabulary = preprocess_vocabulary(source, summary)
    choice = QuestionChoice(candidates, max_questions)
    schema = preprocess_schema(claims, choice, vocabulary, style, layout)
    settings = sampling("preprocess", style, asking.claim_threshold)
    return _request("preprocess", user, schema, settings)


@functools.lru_cache(maxsize=REQUESTS_KEPT)
def questions_request(
    source: str, max_questions: int, style: str, clock_always_ends: bool
) -> JudgeRequest:
    """The coverage questions alone (when each claim is judged in a request of its own)."""
    candidates = question_candidates(source, clock_always_ends=clock_always_ends)
    user = _QUESTIONS.format(
        source=source, count=min(max_questions, len(candidates)), frame=QUESTION_FRAME
    )
    schema = questions_schema(candidates, max_questions)
    return _request("preprocess", user, schema, sampling("preprocess", style), rules=False)


@functools.lru_cache(maxsize=REQUESTS_KEPT)
def claim_request(source: str, summary: str, claim: str, asking: Asking) -> JudgeRequest:
    """One claim's verdict and reason, the source and summary first; the claims' threshold,
    when given, is the P(true) its verdict is committed at; with quoted evidence, a claim
    supported is given the source sentence that supports it as its reason (`check_schema`)."""
    user = _CLAIM.format(source=source, summary=summary, claim=claim)
    vocabulary = preprocess_vocabulary(source, summary)
    quotes = _quotes(claim, source, "source", asking.quote_evidence)
    schema = check_schema(ClaimCheck, vocabulary, asking.style, quotes)
    settings = sampling("preprocess", asking.style, asking.claim_threshold)
    return _request("preprocess", user, schema, settings, rules=False)


def analyze_request(
    summary: str,
    questions: Sequence[str],
    style: str = "sentences",
    threshold: float | None = None,
) -> JudgeRequest:
    """The coverage request; `threshold` is the P(answered) its verdicts are committed at
    (None: the judge's own verdict threshold)."""
    return _analyze_request(summary, tuple(questions), style, threshold)


@functools.lru_cache(maxsize=REQUESTS_KEPT)
def _analyze_request(
    summary: str, questions: tuple[str, ...], style: str, threshold: float | None
) -> JudgeRequest:
    layout = layout_of(style)
    template = _ANALYZE_OPEN if style == "open" else _ANALYZE
    user = template.format(
        summary=summary,
        questions=_listed(questions, "(no questions)"),
        give_reasons=_give_reasons(style, "question", "SUMMARY"),
    )
    vocabulary = analyze_vocabulary(summary, questions)
    schema = coverage_schema(questions, vocabulary, style, layout)
    return _request("analyze", user, schema, sampling("analyze", style, threshold))


@functools.lru_cache(maxsize=REQUESTS_KEPT)
def reason_request(facts: str, style: str = "sentences", score: str = "") -> JudgeRequest:
    """The reason request; `score`, the computed score as the facts state it, opens an "open"
    style explanation."""
    schema = reason_schema(reason_vocabulary(facts), style, score if style == "open" else "")
    template = _REASON_OPEN if style == "open" else _REASON
    return _request("reason", template.format(facts=facts), schema, sampling("reason", style))
