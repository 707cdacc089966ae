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


class ModelEntry(BaseModel):
    """One `[models.NAME]` table. A field's description is the rule quoted when it is broken."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field("", description="text")
    path: Path | None = Field(None, description="a file path")  # a GGUF on disk ...
    package: str | None = Field(None, description="a distribution name")  # ... or in a package
    file: str | None = Field(None, description="a path inside the package")
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

    @model_validator(mode="after")
    def _one_location(self) -> ModelEntry:
        if (self.path is None) == (self.package is None and self.file is None) or (
            self.path is None and (self.package is None or self.file is None)
        ):
            raise ValueError("give either 'path', or both 'package' and 'file'")
        return self

    def to_table(self) -> dict[str, Any]:
        """The fields a registry file sets, in declaration order (for writing a registry)."""
        return {
            key: float(value) if key == "verdict_threshold" else value
            for key, value in self.model_dump(
                mode="json", include=set(ModelEntry.model_fields), exclude_none=True
            ).items()
            if value != "" and not (key == "backend" and value == DEFAULT_BACKEND)
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
    unknown = sorted(str(p["loc"][0]) for p in problems if p["type"] == "extra_forbidden")
    if unknown:
        return f"unknown field(s) {', '.join(unknown)}"
    first = problems[0]
    if not first["loc"]:
        return str(first.get("ctx", {}).get("error", first["msg"]))
    name = str(first["loc"][0])
    rule = ModelEntry.model_fields[name].description or first["msg"]
    return f"{name} must be {rule}, got {first['input']!r}"


def resolve_path(raw: dict[str, Any], origin: Path) -> dict[str, Any]:
    """The entry with its path made absolute: relative paths start at the registry's folder."""
    if not isinstance(raw.get("path"), str):
        return raw
    path = Path(raw["path"]).expanduser()
    return {**raw, "path": path if path.is_absolute() else (origin.parent / path).resolve()}
