"""`ScorerSpec`: everything the generic layers need to know about one kind of scorer.

`eval`, `report`, `calibrate`, the pytest plugin and the CLI look a kind up by name and read
what they need from its spec: how to build it, its options, the shape of its result, its axes,
which metadata fields label its items, and how a person reads its verdicts. Nothing above
`scorers/` names a kind; a new kind is a spec registered under the `offline_scorer.scorers`
entry-point group (or with `scorers.registry.register`).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from offline_scorer.judging.protocol import Judge, JudgeRequest
from offline_scorer.scorers.protocol import Scorer

LabelKind = Literal["binary", "numeric"]


class ScorerOptions(Protocol):
    """An options object of a scorer kind: validated on construction, comparable by value.

    A kind's options type is a frozen pydantic model (help in a field's `json_schema_extra`)
    or a frozen dataclass (help in a field's `metadata`): fields with a "help" text become
    command-line flags (`--max-questions`), and `identity()` is what enters the resume digest.
    """

    @classmethod
    def from_mapping(cls, options: Any) -> Any:
        """An options object from a mapping (either spelling of each name), or None for defaults."""
        ...

    def identity(self) -> Mapping[str, Any]:
        """The options that decide a result, as JSON values."""
        ...


@dataclass(frozen=True)
class CliOption:
    """One command-line flag of an options field: `--name-with-dashes VALUE`."""

    name: str
    type: type
    help: str


def cli_options(options: type) -> tuple[CliOption, ...]:
    """The flags a kind's options type offers: the fields that carry a "help", of a pydantic
    model (in `json_schema_extra`) or of a frozen dataclass (in `metadata`)."""
    hints = typing.get_type_hints(options, include_extras=False)
    found = []
    for name, text in _helps(options):
        found.append(CliOption(name, _flag_type(hints.get(name)), text))
    return tuple(found)


def _helps(options: type) -> list[tuple[str, str]]:
    """(field name, help) of each field of `options` that has a help, in declaration order."""
    fields = getattr(options, "model_fields", None)
    if fields is not None:  # a pydantic model
        return [
            (name, str(field.json_schema_extra["help"]))
            for name, field in fields.items()
            if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("help")
        ]
    return [
        (field.name, str(field.metadata["help"]))
        for field in dataclasses.fields(options)
        if field.metadata.get("help")
    ]


def _flag_type(hint: Any) -> type:
    """The type a flag's value is read as: `float | None` takes a float, a union of numbers
    the widest, a literal its values' type."""
    if isinstance(hint, type):
        return hint
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is Literal:
        return type(args[0]) if args else str
    kinds = [_flag_type(a) for a in args]
    if float in kinds:
        return float
    return kinds[0] if kinds else str


@dataclass(frozen=True)
class VerdictColumn:
    """A column of the report's lowest-scores table: the failing verdicts of one result.

    `failing` takes a result as serialised in a results line and gives (text, reason) pairs.
    """

    heading: str
    failing: Callable[[Mapping[str, Any]], list[tuple[str, str]]]


@dataclass(frozen=True)
class ItemCalibration:
    """How a kind's verdicts on listed items (coverage: questions asked of a summary) are
    calibrated on rows whose items people labelled one by one: the axis they decide, the option
    their threshold is, and their P(positive) for a text and its items (None: the judge gives
    no probabilities)."""

    axis: str
    """The axis the verdicts decide ("coverage")."""
    option: str
    """The option that holds their threshold ("coverage_threshold")."""
    probabilities: Callable[[Scorer, str, tuple[str, ...]], tuple[float, ...] | None]
    """For a text and its items: the judge's P(positive) of each item's verdict, in order."""


@dataclass(frozen=True)
class ScorerSpec:
    """One kind of scorer, as the layers above `scorers/` see it."""

    kind: str
    """The name results lines, the registry and `--scorer` use."""
    title: str
    """How a person names it (report headings)."""
    options: type
    """Its options type (see `ScorerOptions`)."""
    result: type[BaseModel]
    """The model a results line's "result" is validated against."""
    axes: tuple[str, ...]
    """Its sub-scores, in display order; the score is limited by them."""
    label_fields: Mapping[str, LabelKind]
    """Metadata fields that label an item, in order of preference, and what they hold."""
    judged_axis: str
    """The axis whose value 1 means "judged positive" against a binary label."""
    build: Callable[[Judge, Any], Scorer]
    """A scorer over a judge, from an options object of `options`."""
    describe: Callable[[Any], str]
    """A result (as the scorer returns it) as text for a person (`score` prints it)."""
    verdict_columns: tuple[VerdictColumn, ...] = ()
    """The report's columns of failing verdicts."""
    weakest_probability: Callable[[Mapping[str, Any]], float | None] | None = None
    """From a serialised result: the judge's lowest P(positive) among the verdicts that
    decide `judged_axis` (the report's ROC AUC of probabilities), or None when it gave none."""
    calibration_probabilities: (
        Callable[[Scorer, Mapping[str, Any]], tuple[float, ...] | None] | None
    ) = None
    """For a run: the judge's P(positive) of each verdict that decides `judged_axis`, with as
    few judge requests as the kind allows (`calibrate` takes the lowest over labelled rows);
    the function returns None when the judge gives no probabilities, and the field is None
    when the kind cannot be calibrated."""

    item_calibration: ItemCalibration | None = None
    """How its verdicts on listed items are calibrated against people's labels of each
    (`calibrate --axis`), or None when the kind has no such axis."""

    examples: Callable[[], Mapping[str, JudgeRequest]] | None = None
    """Requests for one example item, by a file stem (`grammars/` shows what they admit)."""

    revisions: Mapping[str, int] = dataclasses.field(default_factory=dict)
    """Revisions of what the kind sends the judge and shows a person, by name: a recording's
    recipe carries them, so a file says which revision of the kind made it."""

    def recorded_options(self, options: Any) -> dict[str, Any]:
        """Every option a user can set (each flag's), as `options` holds it, defaults
        included: what a recording's recipe carries, so a later default cannot reinterpret
        it. Options that are the caller's code (a source extractor) have no flag and are
        left out; their effect is in each item's content."""
        return {option.name: getattr(options, option.name) for option in cli_options(self.options)}

    def make_options(self, values: Any = None) -> Any:
        """Its options from a mapping, an options object of its type, or None (defaults)."""
        if isinstance(values, self.options):
            return values
        return self.options.from_mapping(values)  # type: ignore[attr-defined]

    @property
    def rule(self) -> str:
        """How a binary label is predicted, in words (report headings)."""
        return f"{self.judged_axis} == 1"
