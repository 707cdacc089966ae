"""Scorer options, validated once when the scorer is built.

Mastra spells options in camelCase; Python users write snake_case. Both are accepted, and a
mistake (unknown name, both spellings, bad value) fails at construction, not mid-evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from offline_scorer.errors import ConfigError

SourceExtractor = Callable[[Any, Any], str]

DEFAULT_MAX_QUESTIONS = 10
FREE_TEXT_STYLES = ("sentences", "open", "bounded")
"""How the judge's free text is decoded: "sentences" (whole sentences of the inputs' own words,
see `sentence`: what keeps a small model from looping and writing fragments), "open" (whole
sentences of any words in the inputs' letters, and numbers: for a judge that writes words of its
own, a model registry entry's choice), or "bounded" (only a length bound and, for the
explanation, no digits: the requests of early recordings, kept while they are replayed and
upgraded; CHANGELOG.md's compatibility table says until when). The same readability checks
apply to all three."""
SPLITTINGS = (1, 2)
"""How texts are cut into sentences (the claims, and the source sentences questions are made
of), by number: 2, the default, a time's "a.m."/"p.m." ends a sentence only before a capital;
1 after every "a.m."/"p.m." (so "open at 6:30 a.m. on weekdays" became two sentences), which a
recording's recipe names when it was made so (`assembly.migrate` for files without one)."""

QUESTION_UNITS = ("sentences", "facts")
"""What a coverage question asks about: "sentences", a whole source sentence each, the judge
choosing which (what recordings made before "facts" asked, kept while they replay; see
CHANGELOG.md's compatibility table); "facts", one fact
each (a clause of a sentence, see `facts`), chosen by their weight in the source."""


PositiveNumber = (
    Annotated[StrictInt, Field(gt=0)] | Annotated[StrictFloat, Field(gt=0, allow_inf_nan=False)]
)
"""A finite number > 0. A whole number is kept as an int (`_whole`): 2 and 2.0 are one scale,
as in Mastra's JavaScript, so they are one identity and one digest."""
FreeText = Literal["sentences", "open", "bounded"]
QuestionUnit = Literal["sentences", "facts"]


def _flag(rule: str, text: str) -> Any:
    """A field's metadata: `rule`, what a value must be (quoted when one is not), and `text`,
    the help of its command-line flag (`scorers.spec.cli_options`)."""
    return {"description": rule, "json_schema_extra": {"help": text}}


def _threshold(text: str) -> Any:
    """An optional P(true) threshold, strictly between 0 and 1, with its flag's help."""
    return Field(None, gt=0, lt=1, strict=True, **_flag("a number between 0 and 1", text))


class ScorerOptions(BaseModel):
    """The summarization scorer's options: each field's type and bounds are its rules, each
    flag's help its `help`; camelCase aliases (Mastra's spelling) are generated from the names."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        arbitrary_types_allowed=True,
    )

    max_questions: StrictInt = Field(
        DEFAULT_MAX_QUESTIONS,
        ge=1,
        **_flag(
            "a whole number, at least 1 (the scorer needs one coverage question to judge coverage)",
            "Upper bound on coverage questions.",
        ),
    )
    scale: PositiveNumber = Field(
        1,
        **_flag("a finite number > 0", "The score is multiplied by this."),
    )
    source: str | None = Field(None, strict=True, description="a string")
    source_extractor: SourceExtractor | None = Field(
        None, description="a callable (input, output) -> str"
    )
    free_text: FreeText = Field(
        "sentences",
        **_flag(
            "one of sentences, open, bounded",
            "How the judge's reasons are decoded: sentences (the inputs' words), open (any "
            "words; the model's registry entry may choose it) or bounded (a length bound "
            "only: how early recordings asked, to replay or upgrade them).",
        ),
    )
    coverage_threshold: float | None = _threshold(
        "P(answered) at or above which a coverage question counts as answered (default: the "
        "judge's verdict threshold; the model's registry entry may set it)."
    )
    claim_threshold: float | None = _threshold(
        "P(supported) at or above which a claim counts as supported (default: the judge's "
        "verdict threshold; the model's registry entry may set it)."
    )
    one_by_one: StrictBool = Field(
        False,
        **_flag(
            "true or false",
            "Judge each claim and each coverage question in a request of its own, after the "
            "texts it needs (read once per evaluation, as a shared prefix); the model's "
            "registry entry may choose it.",
        ),
    )
    quote_evidence: StrictBool = Field(
        False,
        **_flag(
            "true or false",
            "A claim judged supported (a question judged answered) gives as its reason the "
            "source (summary) sentence the judge points to, quoted whole, among those that "
            "speak of the claim (question): a reason a reader can check, which cannot word a "
            "fact its text does not state. Needs one_by_one; the model's registry entry may "
            "choose it.",
        ),
    )
    coverage_baseline: StrictBool = Field(
        False,
        **_flag(
            "true or false",
            "Ask each coverage question whether the summary states the fact, and also of an "
            "empty summary: a question counts as answered when P(answered) read against that "
            "baseline, sigmoid(logit P - logit P(empty)), reaches coverage_threshold. Takes "
            "out how readily the judge answers a question whatever the summary says. Needs "
            "one_by_one; the model's registry entry may choose it.",
        ),
    )
    splitting: StrictInt = Field(
        2,
        **_flag(
            "one of 1, 2",
            "How texts are cut into sentences: 2 (the default) a time's a.m./p.m. ends a "
            "sentence only before a capital; 1 after every a.m./p.m., for recordings made so. "
            "The model's registry entry may choose it.",
        ),
    )
    questions: QuestionUnit = Field(
        "sentences",
        **_flag(
            "one of sentences, facts",
            "What a coverage question asks about: sentences (a whole source sentence each, "
            "the judge choosing which, as recordings before facts asked) or facts (one fact each, "
            "chosen by their weight in the source). The model's registry entry may choose it.",
        ),
    )

    @field_validator("scale")
    @classmethod
    def _whole(cls, value: int | float) -> int | float:
        return int(value) if isinstance(value, float) and value.is_integer() else value

    @field_validator("splitting")
    @classmethod
    def _splitting(cls, value: int) -> int:
        if value not in SPLITTINGS:
            raise ValueError("not a splitting")
        return value

    @model_validator(mode="after")
    def _together(self) -> ScorerOptions:
        """The rules that join two options."""
        if self.quote_evidence and not self.one_by_one:
            raise ValueError(
                "quote_evidence applies to claims and questions judged one by one: "
                "set one_by_one too"
            )
        if self.coverage_baseline and not self.one_by_one:
            raise ValueError(
                "coverage_baseline applies to questions judged one by one: set one_by_one too"
            )
        if self.coverage_baseline and self.coverage_threshold is None:
            raise ValueError(
                "coverage_baseline needs coverage_threshold (a P(answered) read against the "
                "baseline, such as calibrate --axis coverage sets)"
            )
        return self

    def __init__(self, **values: Any) -> None:
        """Options by name (either spelling); a broken one is a one-line ConfigError."""
        try:
            super().__init__(**values)
        except ValidationError as error:
            raise ConfigError(_explain(error)) from None

    def identity(self) -> dict[str, Any]:
        """The options that decide a result (a source extractor is the caller's code: its
        effect is in the item's content)."""
        found: dict[str, Any] = {
            "max_questions": self.max_questions,
            "scale": self.scale,
            "free_text": self.free_text,
        }
        if self.coverage_threshold is not None:  # absent when unset: older identities hold
            found["coverage_threshold"] = float(self.coverage_threshold)
        if self.claim_threshold is not None:  # absent when unset, as above
            found["claim_threshold"] = float(self.claim_threshold)
        if self.one_by_one:  # absent when off, as above
            found["one_by_one"] = True
        if self.quote_evidence:  # absent when off, as above
            found["quote_evidence"] = True
        if self.coverage_baseline:  # absent when off, as above
            found["coverage_baseline"] = True
        if self.splitting != 1:  # absent when 1, as above
            found["splitting"] = self.splitting
        if self.questions != "sentences":  # absent when sentences, as above
            found["questions"] = self.questions
        return found

    @property
    def clock_always_ends(self) -> bool:
        """Whether sentences are cut after every "a.m."/"p.m." (`splitting` 1)."""
        return self.splitting < 2

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any] | ScorerOptions | None) -> ScorerOptions:
        """Options from a mapping in either spelling (each name once), an options object, or
        None (the defaults)."""
        if options is None:
            return cls()
        if isinstance(options, ScorerOptions):
            return options
        if not isinstance(options, Mapping):
            raise ConfigError(f"options must be a mapping, got {type(options).__name__}")
        names = {**{n: n for n in cls.model_fields}, **_camel_names()}
        seen: dict[str, str] = {}
        for given in options:
            name = names.get(given)
            if name is None:
                known = ", ".join(sorted(names))
                raise ConfigError(f"unknown scorer option {given!r}; known options: {known}")
            if name in seen:
                raise ConfigError(f"option {name!r} given twice (as snake_case and camelCase)")
            seen[name] = given
        return cls(**{seen_as: options[seen_as] for seen_as in seen.values()})


def _camel_names() -> dict[str, str]:
    """Each option's camelCase spelling, by which Mastra's users name it."""
    return {
        field.alias: name
        for name, field in ScorerOptions.model_fields.items()
        if field.alias and field.alias != name
    }


def _explain(error: ValidationError) -> str:
    """The first problem in one line: the option, the rule its field states, the value given."""
    problem = error.errors()[0]
    names = _camel_names()
    place = [str(part) for part in problem["loc"]]
    if not place:  # a rule joining two options: its own words
        return str(problem.get("ctx", {}).get("error", problem["msg"]))
    name = names.get(place[0], place[0])
    if problem["type"] == "extra_forbidden":
        return f"unknown scorer option {place[0]!r}"
    field = ScorerOptions.model_fields.get(name)
    rule = field.description if field is not None and field.description else problem["msg"]
    return f"{name} must be {rule}, got {problem['input']!r}"
