"""Record modes, after vcrpy's, and the environment variable that forces one (for CI).

- replay: answer only from the cassette, never touch the model; a miss is an error.
- auto:   replay what is recorded, run the model for the rest and record it.
- record: always run the model, and record every exchange.
- off:    run the model, record nothing.

Kept apart from the judge so that option parsing (CLI, pytest plugin) can name the modes
without importing the recording machinery; `offline_scorer.settings` reads the environment.
"""

from __future__ import annotations

from enum import StrEnum

from offline_scorer.errors import ConfigError
from offline_scorer.settings import RECORD_MODE_ENV, forced_record_mode

__all__ = ["MODE_ENV", "RecordMode", "forced_mode", "parse_mode"]

MODE_ENV = RECORD_MODE_ENV


class RecordMode(StrEnum):
    REPLAY = "replay"
    AUTO = "auto"
    RECORD = "record"
    OFF = "off"


def parse_mode(value: str, origin: str) -> RecordMode:
    """The mode `value` names (any case, surrounding spaces ignored); ConfigError otherwise."""
    try:
        return RecordMode(value.strip().lower())
    except ValueError:
        choices = ", ".join(m.value for m in RecordMode)
        raise ConfigError(
            f"{origin}: unknown record mode {value!r}; use one of {choices}"
        ) from None


def forced_mode() -> RecordMode | None:
    """The mode `$OFFLINE_SCORER_RECORD_MODE` forces on every command (for CI), if set."""
    value = forced_record_mode()
    return parse_mode(value, MODE_ENV) if value else None
