"""Scorer options, validated once when the scorer is built.

Mastra spells options in camelCase; Python users write snake_case. Both are accepted, and a
mistake (unknown name, both spellings, bad value) fails at construction, not mid-evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from offline_scorer.errors import ConfigError

SourceExtractor = Callable[[Any, Any], str]

DEFAULT_MAX_QUESTIONS = 10
FREE_TEXT_STYLES = ("sentences", "open", "bounded")
"""How the judge's free text is decoded: "sentences" (whole sentences of the inputs' own words,
see `sentence`: what keeps a small model from looping and writing fragments), "open" (whole
sentences of any words in the inputs' letters, and numbers: for a judge that writes words of its
own, a model registry entry's choice), or "bounded" (only a length bound and, for the
explanation, no digits: what offline-scorer 0.3 sent, kept so its cassettes still replay and
upgrade). The same readability checks apply to all three."""
SPLITTINGS = (1, 2)
"""How texts are cut into sentences (the claims, and the source sentences questions are made
of), by number: 2, the default, a time's "a.m."/"p.m." ends a sentence only before a capital;
1 after every "a.m."/"p.m." (so "open at 6:30 a.m. on weekdays" became two sentences), which a
recording's recipe names when it was made so (`assembly.migrate` for files without one)."""

QUESTION_UNITS = ("sentences", "facts")
"""What a coverage question asks about: "sentences", a whole source sentence each, the judge
choosing which (as offline-scorer 0.4 asked, kept so its recordings replay); "facts", one fact
each (a clause of a sentence, see `facts`), chosen by their weight in the source."""


_ALIASES = {
    "max_questions": "max_questions",
    "maxQuestions": "max_questions",
    "scale": "scale",
    "source": "source",
    "source_extractor": "source_extractor",
    "sourceExtractor": "source_extractor",
    "free_text": "free_text",
    "freeText": "free_text",
    "coverage_threshold": "coverage_threshold",
    "coverageThreshold": "coverage_threshold",
    "claim_threshold": "claim_threshold",
    "claimThreshold": "claim_threshold",
    "one_by_one": "one_by_one",
    "oneByOne": "one_by_one",
    "quote_evidence": "quote_evidence",
    "quoteEvidence": "quote_evidence",
    "coverage_baseline": "coverage_baseline",
    "coverageBaseline": "coverage_baseline",
    "splitting": "splitting",
    "questions": "questions",
}


@dataclass(frozen=True)
class ScorerOptions:
    max_questions: int = field(
        default=DEFAULT_MAX_QUESTIONS, metadata={"help": "Upper bound on coverage questions."}
    )
    scale: float = field(default=1, metadata={"help": "The score is multiplied by this."})
    source: str | None = None
    source_extractor: SourceExtractor | None = None
    free_text: str = field(
        default="sentences",
        metadata={
            "help": "How the judge's reasons are decoded: sentences (the inputs' words), "
            "open (any words; the model's registry entry may choose it) or bounded (as "
            "offline-scorer 0.3 did, to replay or upgrade its cassettes)."
        },
    )

    coverage_threshold: float | None = field(
        default=None,
        metadata={
            "help": "P(answered) at or above which a coverage question counts as answered "
            "(default: the judge's verdict threshold; the model's registry entry may set it)."
        },
    )

    claim_threshold: float | None = field(
        default=None,
        metadata={
            "help": "P(supported) at or above which a claim counts as supported (default: "
            "the judge's verdict threshold; the model's registry entry may set it)."
        },
    )

    one_by_one: bool = field(
        default=False,
        metadata={
            "help": "Judge each claim and each coverage question in a request of its own, "
            "after the texts it needs (read once per evaluation, as a shared prefix); the "
            "model's registry entry may choose it."
        },
    )

    quote_evidence: bool = field(
        default=False,
        metadata={
            "help": "A claim judged supported (a question judged answered) gives as its "
            "reason the source (summary) sentence the judge points to, quoted whole, among "
            "those that speak of the claim (question): a reason a reader can check, which "
            "cannot word a fact its text does not state. Needs "
            "one_by_one; the model's registry entry may choose it."
        },
    )

    coverage_baseline: bool = field(
        default=False,
        metadata={
            "help": "Ask each coverage question whether the summary states the fact, and "
            "also of an empty summary: a question counts as answered when P(answered) read "
            "against that baseline, sigmoid(logit P - logit P(empty)), reaches "
            "coverage_threshold. Takes out how readily the judge answers a question whatever "
            "the summary says. Needs one_by_one; the model's registry entry may choose it."
        },
    )

    splitting: int = field(
        default=2,
        metadata={
            "help": "How texts are cut into sentences: 2 (the default) a time's a.m./p.m. "
            "ends a sentence only before a capital; 1 after every a.m./p.m., for recordings "
            "made so. The model's registry entry may choose it."
        },
    )

    questions: str = field(
        default="sentences",
        metadata={
            "help": "What a coverage question asks about: sentences (a whole source sentence "
            "each, the judge choosing which, as offline-scorer 0.4 asked) or facts (one fact "
            "each, chosen by their weight in the source). The model's registry entry may "
            "choose it."
        },
    )

    def __post_init__(self) -> None:
        mq = self.max_questions
        if isinstance(mq, bool) or not isinstance(mq, int):
            raise ConfigError(f"max_questions must be a whole number >= 1, got {mq!r}")
        if mq < 1:
            raise ConfigError(
                f"max_questions must be at least 1, got {mq}: the scorer needs at least one "
                "coverage question to judge coverage"
            )
        sc = self.scale
        if isinstance(sc, bool) or not isinstance(sc, int | float) or not math.isfinite(sc):
            raise ConfigError(f"scale must be a finite number > 0, got {sc!r}")
        if sc <= 0:
            raise ConfigError(f"scale must be > 0, got {sc}")
        if self.source is not None and not isinstance(self.source, str):
            raise ConfigError(f"source must be a string, got {type(self.source).__name__}")
        if self.source_extractor is not None and not callable(self.source_extractor):
            raise ConfigError("source_extractor must be a callable (input, output) -> str")
        for name in ("coverage_threshold", "claim_threshold"):
            ct = getattr(self, name)
            if ct is not None and (
                isinstance(ct, bool) or not isinstance(ct, int | float) or not 0 < ct < 1
            ):
                raise ConfigError(f"{name} must be a number between 0 and 1, got {ct!r}")
        if not isinstance(self.one_by_one, bool):
            raise ConfigError(f"one_by_one must be true or false, got {self.one_by_one!r}")
        if not isinstance(self.coverage_baseline, bool):
            raise ConfigError(
                f"coverage_baseline must be true or false, got {self.coverage_baseline!r}"
            )
        if self.coverage_baseline and not self.one_by_one:
            raise ConfigError(
                "coverage_baseline applies to questions judged one by one: set one_by_one too"
            )
        if self.coverage_baseline and self.coverage_threshold is None:
            raise ConfigError(
                "coverage_baseline needs coverage_threshold (a P(answered) read against the "
                "baseline, such as calibrate --axis coverage sets)"
            )
        if not isinstance(self.quote_evidence, bool):
            raise ConfigError(f"quote_evidence must be true or false, got {self.quote_evidence!r}")
        if self.quote_evidence and not self.one_by_one:
            raise ConfigError(
                "quote_evidence applies to claims and questions judged one by one: "
                "set one_by_one too"
            )
        if isinstance(self.splitting, bool) or self.splitting not in SPLITTINGS:
            raise ConfigError(
                f"splitting must be one of {', '.join(map(str, SPLITTINGS))}, "
                f"got {self.splitting!r}"
            )
        if self.questions not in QUESTION_UNITS:
            raise ConfigError(
                f"questions must be one of {', '.join(QUESTION_UNITS)}, got {self.questions!r}"
            )
        if self.free_text not in FREE_TEXT_STYLES:
            raise ConfigError(
                f"free_text must be one of {', '.join(FREE_TEXT_STYLES)}, got {self.free_text!r}"
            )

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
        if options is None:
            return cls()
        if isinstance(options, ScorerOptions):
            return options
        if not isinstance(options, Mapping):
            raise ConfigError(f"options must be a mapping, got {type(options).__name__}")
        values: dict[str, Any] = {}
        for name, value in options.items():
            canonical = _ALIASES.get(name)
            if canonical is None:
                known = ", ".join(sorted(_ALIASES))
                raise ConfigError(f"unknown scorer option {name!r}; known options: {known}")
            if canonical in values:
                raise ConfigError(f"option {canonical!r} given twice (as snake_case and camelCase)")
            values[canonical] = value
        return cls(**values)
