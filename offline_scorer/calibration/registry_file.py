"""Writing what a calibration measured into a registry file: the one place that edits a
user's registry, keeping its comments, so both calibrations (verdicts and items) write alike."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from offline_scorer.errors import ConfigError
from offline_scorer.files import atomic_write_text
from offline_scorer.models.entry import parse_entry

__all__ = ["kind_table", "write_document"]


def kind_table(registry: Path, name: str, entry: Mapping[str, Any], kind: str) -> tuple[Any, Any]:
    """The registry file parsed as a tomlkit document (a new one when there is no file) and
    the table of scorer kind `kind` of model `name` in it, made when missing.

    A user registry entry replaces the shipped one whole, so a model the file lacks is copied
    into it from `entry` (the resolved registry entry) first. Every entry the file holds must
    read as the registry reader reads it (a ConfigError naming the field and what to run
    else), so a calibration never writes beside fields the reader would refuse."""
    import tomlkit

    try:
        text = registry.read_text(encoding="utf-8") if registry.is_file() else ""
        document = tomlkit.parse(text)
    except OSError as error:
        raise ConfigError(f"cannot read model registry {registry}: {error.strerror}") from None
    except (tomlkit.exceptions.ParseError, UnicodeDecodeError) as error:
        raise ConfigError(f"model registry {registry} is not valid TOML: {error}") from None
    models = document.setdefault("models", tomlkit.table(is_super_table=True))
    for known, table in models.items():
        parse_entry(table.unwrap(), f"{registry} [models.{known}]")
    if name not in models:
        table = tomlkit.table()
        for key, value in entry.items():
            table[key] = value
        models[name] = table
    scorers = models[name].setdefault("scorers", tomlkit.table(is_super_table=True))
    return document, scorers.setdefault(kind, tomlkit.table())


def write_document(registry: Path, document: Any) -> None:
    """Write the document whole, atomically (a reader sees the old file or the new one)."""
    import tomlkit

    try:
        registry.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(registry, tomlkit.dumps(document))
    except OSError as error:
        raise ConfigError(
            f"cannot write model registry {registry}: {error.strerror or error}"
        ) from None
