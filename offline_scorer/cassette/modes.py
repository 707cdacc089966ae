"""Record modes, after vcrpy's, and the environment variable that forces one (for CI).

- replay: answer only from the cassette, never touch the model; a miss is an error.
- auto:   replay what is recorded, run the model for the rest and record it.
- record: always run the model, and record every exchange.
- off:    run the model, record nothing.

What a mode means (does it read the cassette, write it, run the model?) is said here once, as
properties of the mode; every caller asks the mode instead of comparing it with a member, so a
new mode, or a change of one, is made in this file alone.

Kept apart from the judge so that option parsing (CLI, pytest plugin) can name the modes
without importing the recording machinery; `offline_scorer.settings` reads the environment.
"""

from __future__ import annotations

from enum import StrEnum

from offline_scorer.errors import ConfigError
from offline_scorer.settings import RECORD_MODE_ENV, forced_record_mode

__all__ = ["RecordMode", "forced_mode", "parse_mode"]


class RecordMode(StrEnum):
    REPLAY = "replay"
    AUTO = "auto"
    RECORD = "record"
    OFF = "off"

    @property
    def reads(self) -> bool:
        """Answers from the cassette what it holds (replay, auto)."""
        return self in (RecordMode.REPLAY, RecordMode.AUTO)

    @property
    def writes(self) -> bool:
        """Records what the model answers (auto, record)."""
        return self in (RecordMode.AUTO, RecordMode.RECORD)

    @property
    def runs_model(self) -> bool:
        """May run the model (all but replay): needs the model file and the runtime, and keys
        what it records under the backend's current id (only a replay answers under an
        earlier id that its recording names)."""
        return self is not RecordMode.REPLAY

    @property
    def uses_cassette(self) -> bool:
        """Has a cassette at all, to read or to write (all but off)."""
        return self.reads or self.writes

    @property
    def needs_recording(self) -> bool:
        """Answers only from the cassette (replay): it must exist before the run starts, a
        miss is an error, and every answer is ready without waiting for a model."""
        return self.reads and not self.runs_model

    @property
    def runs_every_request(self) -> bool:
        """Runs the model for every request, so it is needed at once (record, off)."""
        return self.runs_model and not self.reads


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
    return parse_mode(value, RECORD_MODE_ENV) if value else None
