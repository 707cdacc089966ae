"""Converting a registry file of the former shape (one `verdict_threshold` and `quality` per
model, options under `scorer_options.KIND` and `served_options.KIND`) to the per-kind one
(`[models.NAME.scorers.KIND]`), keeping every value and the comments inside moved tables.

The former shape still loads (`entry.fold_former`, the same moves on parsed data); this
rewrites the file so that `calibrate --scorer KIND` has one place to write each kind's figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from offline_scorer.errors import ConfigError
from offline_scorer.models.entry import LEGACY_KIND, fold_former


def upgrade_document(document: Any) -> list[str]:
    """Move the former shape's fields of every `[models.NAME]` table of a tomlkit document
    into its `scorers` table, in place; the names of the models moved (none: nothing to do).

    Values move as the tomlkit items they are, so a moved table keeps the comments written
    inside it; a comment written above a moved key stays where it was."""
    import tomlkit

    models = document.get("models")
    if models is None or not hasattr(models, "items"):
        return []
    moved = []
    for name, table in models.items():
        if not hasattr(table, "unwrap") or not isinstance(table.unwrap(), dict):
            continue
        plain = table.unwrap()
        if plain == _check(name, plain):
            continue
        scorers = table.get("scorers")
        if scorers is None:
            scorers = tomlkit.table(is_super_table=True)
        for key in ("verdict_threshold", "quality"):
            if key in table:
                _part(scorers, LEGACY_KIND)[key] = table.pop(key)
        for former, key in (("scorer_options", "options"), ("served_options", "served_options")):
            if former in table:
                for kind, options in table.pop(former).items():
                    _part(scorers, kind)[key] = options
        table.pop("scorers", None)
        table["scorers"] = scorers
        moved.append(name)
    return moved


def _check(name: str, plain: dict[str, Any]) -> dict[str, Any]:
    """The table as the reader folds it; a ConfigError when the reader would refuse it."""
    try:
        return fold_former(plain)
    except ValueError as error:
        raise ConfigError(f"[models.{name}]: {error}") from None


def _part(scorers: Any, kind: str) -> Any:
    import tomlkit

    if kind not in scorers:
        scorers[kind] = tomlkit.table()
    return scorers[kind]


def upgrade_file(path: Path) -> list[str]:
    """Convert the registry file at `path` in place (written whole, atomically, only when a
    model moved); the names of the models moved."""
    import tomlkit

    from offline_scorer.files import atomic_write_text

    try:
        document = tomlkit.parse(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read model registry {path}: {error.strerror}") from None
    except (tomlkit.exceptions.ParseError, UnicodeDecodeError) as error:
        raise ConfigError(f"model registry {path} is not valid TOML: {error}") from None
    moved = upgrade_document(document)
    if moved:
        try:
            atomic_write_text(path, tomlkit.dumps(document))
        except OSError as error:
            raise ConfigError(f"cannot write model registry {path}: {error.strerror}") from None
    return moved
