"""The judge's structured answers: pydantic models, and the bounded JSON schemas sent with requests.

The models fix the structure (all fields required, no extra fields) and are what the scorer
parses. The request schemas add decoding bounds on top of them (list sizes, free text as whole
sentences of bounded length: see `sentence`) and grounding (the claims a preprocess answer must
echo, the questions it may choose from, the questions a coverage answer must echo), so a
constrained decoder always terminates and can only speak of the texts it is given. Bounds are
derived from the models here, never written by hand.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, model_validator

from offline_scorer.scorers.summarization.evidence import with_quotes
from offline_scorer.scorers.summarization.sentence import (
    Vocabulary,
    open_pattern,
    sentence_pattern,
)

# Decoding bounds: generous for summaries of a few sentences, tight enough that a looping small
# model stops within seconds. Changing any of them changes grammars and cassette keys.
MAX_REASON_WORDS = 20  # why one verdict was given
MAX_EXPLANATION_WORDS = 45  # the reason step's explanation
# The "open" style's bounds: a judge writing its own words needs room to finish a sentence
# (at a bound a sentence stops mid-thought, or its last words run together); a reason is one
# sentence, an explanation one or more. Each starts naming what it speaks of (the source...).
OPEN_REASON_WORDS = 40  # one sentence, ended by the judge long before the bound
OPEN_EXPLANATION_WORDS = 45
OPENINGS = {"alignment": "The source", "coverage": "The summary", "explanation": "The score"}
# The "bounded" free-text style bounds characters instead.
MAX_REASON_CHARS = 100
MAX_EXPLANATION_CHARS = 240
# Characters a model writes numbers with (digits, superscripts, vulgar fractions, number forms,
# circled and wide digits): what Mastra's reason step and a "bounded" explanation leave out.
NO_DIGITS_PATTERN = (
    "^[^0-9\u00b2\u00b3\u00b9\u00bc-\u00be\u2070-\u2079\u2080-\u2089\u2150-\u218f"
    "\u2460-\u24ff\u2776-\u2793\uff10-\uff19]*$"
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ClaimVerdict(_Strict):
    claim: str
    supported: bool
    reason: str


class QuestionVerdict(_Strict):
    question: str
    answered: bool
    reason: str


class ClaimCall(_Strict):
    """A verdict on a claim without its reason (the reasons follow every verdict)."""

    claim: str
    supported: bool


class QuestionCall(_Strict):
    """A verdict on a question without its reason (the reasons follow every verdict)."""

    question: str
    answered: bool


def _one_reason_each(calls: Sequence[Any], reasons: Sequence[str], what: str) -> None:
    if len(reasons) != len(calls):
        raise ValueError(f"{len(reasons)} reasons for {len(calls)} {what}: give one each")


Joined = TypeVar("Joined", ClaimVerdict, QuestionVerdict)


def _with_reasons(
    calls: Sequence[BaseModel], reasons: Sequence[str], verdict: type[Joined]
) -> list[Joined]:
    """Each verdict joined to its reason, in Mastra's shape (the result's). Built through
    validation: pydantic-core checks three plain fields faster than `model_construct` skips
    them (0.8 against 1.8 us; replay joins every verdict of every evaluation)."""
    return [verdict(**call.__dict__, reason=r) for call, r in zip(calls, reasons, strict=True)]


def with_reason(verdict: Joined, reason: str) -> Joined:
    """The verdict with another reason (validated, as `_with_reasons` says why)."""
    return type(verdict)(**{**verdict.__dict__, "reason": reason})


class PreprocessOutput(_Strict):
    """Every claim's verdict, then one reason per claim, then the questions.

    Verdicts come first so that no verdict is decoded after, and so swayed by, the text of
    another verdict's reason: a verdict depends on the source, the claims and earlier verdicts
    only."""

    alignment: list[ClaimCall]
    reasons: list[str]
    questions: list[str]

    @model_validator(mode="after")
    def _paired(self) -> PreprocessOutput:
        _one_reason_each(self.alignment, self.reasons, "claims")
        return self

    def verdicts(self) -> list[ClaimVerdict]:
        return _with_reasons(self.alignment, self.reasons, ClaimVerdict)


class InterleavedPreprocessOutput(_Strict):
    """Each claim's verdict with its reason: Mastra's shape, and the "bounded" style's."""

    alignment: list[ClaimVerdict]
    questions: list[str]

    def verdicts(self) -> list[ClaimVerdict]:
        return list(self.alignment)


class CoverageOutput(_Strict):
    """Every question's verdict, then one reason per question (verdicts first, as above)."""

    coverage: list[QuestionCall]
    reasons: list[str]

    @model_validator(mode="after")
    def _paired(self) -> CoverageOutput:
        _one_reason_each(self.coverage, self.reasons, "questions")
        return self

    def verdicts(self) -> list[QuestionVerdict]:
        return _with_reasons(self.coverage, self.reasons, QuestionVerdict)


class InterleavedCoverageOutput(_Strict):
    """Each question's verdict with its reason: Mastra's shape, and the "bounded" style's."""

    coverage: list[QuestionVerdict]

    def verdicts(self) -> list[QuestionVerdict]:
        return list(self.coverage)


class ClaimCheck(_Strict):
    """One claim's verdict judged alone; the request names the claim, the answer does not."""

    supported: bool
    reason: str


class QuestionCheck(_Strict):
    """One question's verdict judged alone (as `ClaimCheck`)."""

    answered: bool
    reason: str


class QuestionsOutput(_Strict):
    """The questions alone (asked apart when each claim is judged on its own)."""

    questions: list[str]


class ReasonOutput(_Strict):
    explanation: str


Layout = Literal["verdicts-first", "interleaved"]
"""Where reasons go: after every verdict (the library's "sentences" requests), or each beside
its verdict (Mastra's shape, and the "bounded" style's requests)."""


def layout_of(style: str) -> Layout:
    """The answer layout a free-text style's requests use (see `options.FREE_TEXT_STYLES`)."""
    return "interleaved" if style == "bounded" else "verdicts-first"


def preprocess_model(layout: Layout) -> type[PreprocessOutput | InterleavedPreprocessOutput]:
    return InterleavedPreprocessOutput if layout == "interleaved" else PreprocessOutput


def coverage_model(layout: Layout) -> type[CoverageOutput | InterleavedCoverageOutput]:
    return InterleavedCoverageOutput if layout == "interleaved" else CoverageOutput


_NOT_SENT = frozenset({"title", "description"})


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """Resolve local $refs so bounds can be attached per use site; drop titles and descriptions
    (docstrings are for readers of the code, not part of what a request sends)."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]))
            return {k: walk(v) for k, v in node.items() if k not in _NOT_SENT}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


def word_bounds(style: str) -> tuple[int, int]:
    """(reason, explanation) word bounds of a free-text style's grammar and checks."""
    if style == "open":
        return OPEN_REASON_WORDS, OPEN_EXPLANATION_WORDS
    return MAX_REASON_WORDS, MAX_EXPLANATION_WORDS


def _text(
    node: dict[str, Any],
    bounds: tuple[int, int],
    vocabulary: Vocabulary,
    style: str,
    opening: str,
) -> None:
    """A free text: whole sentences of at most `max_words` words (`bounds`: words, then
    characters) in the inputs' vocabulary; in the "open" style any words in the inputs'
    letters, and numbers; in the "bounded" style 1 to `max_chars` characters (see
    `options.FREE_TEXT_STYLES`)."""
    max_words, max_chars = bounds
    if style == "bounded":
        node.update(minLength=1, maxLength=max_chars)
    elif style == "open":
        one_sentence = opening != OPENINGS["explanation"]
        node["pattern"] = open_pattern(max_words, vocabulary, opening, one_sentence)
    else:
        node["pattern"] = sentence_pattern(max_words, vocabulary)


@functools.lru_cache(maxsize=64)
def _schema_json(model: type[BaseModel]) -> str:
    """A model's schema with $refs inlined, as JSON text (pydantic's generation is slow)."""
    return json.dumps(_inline(model.model_json_schema()))


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return json.loads(_schema_json(model))  # a fresh copy: callers may modify it


def _reason_node(schema: dict[str, Any], verdicts: str, layout: Layout) -> dict[str, Any]:
    """Where a layout's schema keeps the reasons' text schema."""
    properties = schema["properties"]
    if layout == "interleaved":
        return properties[verdicts]["items"]["properties"]["reason"]
    return properties["reasons"]["items"]


@functools.lru_cache(maxsize=64)
def _preprocess_template(vocabulary: Vocabulary, style: str, layout: Layout) -> dict[str, Any]:
    schema = _schema(preprocess_model(layout))
    reason = _reason_node(schema, "alignment", layout)
    words = word_bounds(style)[0]
    _text(reason, (words, MAX_REASON_CHARS), vocabulary, style, OPENINGS["alignment"])
    return schema


def _with_prefix(array: dict[str, Any], field: str, values: Sequence[str]) -> dict[str, Any]:
    """An array schema whose items are the template's item with `field` fixed to each value.

    Key order is the order the same edits in place would give (`items` moved after
    `prefixItems`), because the cassette key holds the schema with its key order.
    """
    item = array["items"]
    properties = item["properties"]
    prefix = [{**item, "properties": {**properties, field: {"const": value}}} for value in values]
    out = {key: value for key, value in array.items() if key != "items"}
    out.update(prefixItems=prefix, items=False, minItems=len(prefix), maxItems=len(prefix))
    return out


def _counted(array: dict[str, Any], count: int) -> dict[str, Any]:
    """An array schema of exactly `count` items: one reason per verdict."""
    return {**array, "minItems": count, "maxItems": count}


class QuestionChoice(NamedTuple):
    """The questions a judge chooses from: these candidates, at most `most` of them."""

    candidates: Sequence[str]
    most: int


def preprocess_schema(
    claims: Sequence[str],
    choice: QuestionChoice,
    vocabulary: Vocabulary,
    style: str = "sentences",
    layout: Layout = "verdicts-first",
) -> dict[str, Any]:
    """One verdict per given claim, in order, echoing it; questions chosen from the choice's
    candidates (`uniqueItems` over an `enum`), as many as its count allows and the source
    offers, so the judge chooses which facts to ask about but cannot invent, cut or repeat one.
    In the verdicts-first layout, exactly one reason per claim follows the verdicts.

    Built per request by copying only the path that changes from a cached template, so the
    result shares its other parts with every other request's: treat it as read-only.
    """
    template = _preprocess_template(vocabulary, style, layout)
    properties = template["properties"]
    changed = {"alignment": _with_prefix(properties["alignment"], "claim", claims)}
    if layout != "interleaved":
        changed["reasons"] = _counted(properties["reasons"], len(claims))
    changed["questions"] = _questions_node(*choice)
    return {**template, "properties": {**properties, **changed}}


def _questions_node(candidates: Sequence[str], max_questions: int) -> dict[str, Any]:
    """A set of questions drawn from `candidates`, as many as `max_questions` allows."""
    count = min(max_questions, len(candidates))
    return {
        "type": "array",
        "items": {"enum": list(candidates)},
        "uniqueItems": True,
        "minItems": count,
        "maxItems": count,
    }


def questions_schema(candidates: Sequence[str], max_questions: int) -> dict[str, Any]:
    """The questions alone, chosen from `candidates` as `preprocess_schema` has them."""
    schema = _schema(QuestionsOutput)
    schema["properties"]["questions"] = _questions_node(candidates, max_questions)
    return schema


@functools.lru_cache(maxsize=64)
def check_schema(
    model: type[BaseModel], vocabulary: Vocabulary, style: str, quotes: Sequence[str] = ()
) -> dict[str, Any]:
    """One verdict of `model` (`ClaimCheck`, `QuestionCheck`), then its reason (cached and
    shared: read-only). With
    `quotes`, a verdict of true has one of them as its reason (`evidence.with_quotes`)."""
    schema = _schema(model)
    opening = OPENINGS["alignment" if model is ClaimCheck else "coverage"]
    bounds = (word_bounds(style)[0], MAX_REASON_CHARS)
    _text(schema["properties"]["reason"], bounds, vocabulary, style, opening)
    return with_quotes(schema, quotes)


@functools.lru_cache(maxsize=64)
def _coverage_template(vocabulary: Vocabulary, style: str, layout: Layout) -> dict[str, Any]:
    schema = _schema(coverage_model(layout))
    reason = _reason_node(schema, "coverage", layout)
    words = word_bounds(style)[0]
    _text(reason, (words, MAX_REASON_CHARS), vocabulary, style, OPENINGS["coverage"])
    return schema


def coverage_schema(
    questions: Sequence[str],
    vocabulary: Vocabulary,
    style: str = "sentences",
    layout: Layout = "verdicts-first",
) -> dict[str, Any]:
    """Exactly one verdict per asked question, in order, each echoing its question verbatim
    (then, verdicts first, one reason per question).

    Shares its unchanging parts with the cached template, as `preprocess_schema` does: treat
    the result as read-only.
    """
    template = _coverage_template(vocabulary, style, layout)
    properties = template["properties"]
    changed = {"coverage": _with_prefix(properties["coverage"], "question", questions)}
    if layout != "interleaved":
        changed["reasons"] = _counted(properties["reasons"], len(questions))
    return {**template, "properties": {**properties, **changed}}


@functools.lru_cache(maxsize=64)
def reason_schema(
    vocabulary: Vocabulary, style: str = "sentences", score: str = ""
) -> dict[str, Any]:
    """The explanation: whole sentences of the facts' words, no digits in the "bounded" style;
    in the "open" style it starts "The score is SCORE because", Mastra's form, with the
    computed `score`, so the judge's own words say why.

    Cached and shared, as the other step schemas' templates are: treat it as read-only."""
    schema = _schema(ReasonOutput)
    explanation = schema["properties"]["explanation"]
    words = word_bounds(style)[1]
    opening = f"{OPENINGS['explanation']} is {score} because" if score else OPENINGS["explanation"]
    _text(explanation, (words, MAX_EXPLANATION_CHARS), vocabulary, style, opening)
    if style == "bounded":
        explanation["pattern"] = NO_DIGITS_PATTERN
    return schema
