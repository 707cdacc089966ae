"""Converting a model registry written for offline-scorer 0.3 (one `verdict_threshold` and
`quality` per model, options under `scorer_options.KIND` and `served_options.KIND`) to the
per-kind shape (`[models.NAME.scorers.KIND]`), keeping every value and the comments inside
moved tables.

The registry reader knows only the per-kind shape: an entry of the earlier one fails to load
with its unknown fields named and this command (`offline-scorer migrate registry FILE`). The
earlier shape's one threshold and quality were measured with the summarization scorer, the
only kind there was, so they move into that kind's table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from offline_scorer.assembly.migrate.recordings import Migrated
from offline_scorer.errors import ConfigError
from offline_scorer.files import atomic_write_text

__all__ = ["migrate_registry", "move_fields"]

_ONE_KIND = "summarization"
"""The kind whose figures a 0.3 registry's one `verdict_threshold` and `quality` are."""

_PER_KIND = {"scorer_options": "options", "served_options": "served_options"}
"""0.3's per-kind option tables, and the key each becomes inside `scorers.KIND`."""


def move_fields(table: Any, new_table: Callable[[bool], Any] = lambda _outer: {}) -> bool:
    """Move the 0.3 fields of one `[models.NAME]` table (a dict, or a tomlkit table) into its
    `scorers` table, in place, making tables with `new_table(outer)` (`outer`: the `scorers`
    table itself, which holds only tables); whether any moved. A
    value the entry also sets in its new place, differently, is a ConfigError: which one is
    meant is not ours to guess."""
    moves: list[tuple[str, str, Any]] = [
        (_ONE_KIND, key, table.pop(key)) for key in ("verdict_threshold", "quality") if key in table
    ]
    for old, key in _PER_KIND.items():
        if old in table:
            kinds = table.pop(old)
            if not hasattr(kinds, "items"):
                raise ConfigError(f"'{old}' must be a table of tables, one per scorer kind")
            moves += [(kind, key, value) for kind, value in kinds.items()]
    if not moves:
        return False
    scorers = table.pop("scorers", None)
    if scorers is None:
        scorers = new_table(True)
    for kind, key, value in moves:
        if kind not in scorers:
            scorers[kind] = new_table(False)
        part = scorers[kind]
        if key in part and _plain(part[key]) != _plain(value):
            raise ConfigError(
                f"'{key}' of the {kind} kind is given twice (outside scorers and in "
                f"scorers.{kind}); keep one"
            )
        part[key] = value
    table["scorers"] = scorers  # last, as the shipped registry orders it
    return True


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def migrate_registry(path: Path) -> Migrated:
    """Convert the registry file at `path` in place (written whole, atomically, only when an
    entry moved); the summary names the entries moved. Values move as the tomlkit items they
    are, so a moved table keeps the comments written inside it; a comment written above a
    moved key stays where it was."""
    import tomlkit

    try:
        document = tomlkit.parse(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read model registry {path}: {error.strerror}") from None
    except (tomlkit.exceptions.ParseError, UnicodeDecodeError) as error:
        raise ConfigError(f"model registry {path} is not valid TOML: {error}") from None
    models: Any = document.get("models") or {}
    moved: list[str] = []
    for name, table in models.items():
        if not hasattr(table, "unwrap") or not isinstance(table.unwrap(), dict):
            continue
        try:
            if move_fields(table, lambda outer: tomlkit.table(is_super_table=outer)):
                moved.append(name)
        except ConfigError as error:
            raise ConfigError(f"{path} [models.{name}]: {error}") from None
    if not moved:
        return Migrated(path, f"{path} is already in the current shape; nothing to do")
    try:
        atomic_write_text(path, tomlkit.dumps(document))
    except OSError as error:
        raise ConfigError(f"cannot write model registry {path}: {error.strerror}") from None
    return Migrated(
        path,
        f"migrated {path}: {', '.join(moved)} now keep their figures and options in "
        "[models.NAME.scorers.KIND] (the earlier shape's were the summarization kind's)",
    )
