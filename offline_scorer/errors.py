"""Every failure a user can meet, each with the exit code the CLI uses for it.

Exit codes are part of the contract: scripts and CI branch on them.
"""

from __future__ import annotations


class OfflineScorerError(Exception):
    """Base class: a one-line message meant for the person running the tool."""

    exit_code: int = 1


class InputError(OfflineScorerError):
    """The input (files, run shapes, options) is unusable; the user must change it."""

    exit_code = 2


class ConfigError(InputError):
    """Scorer options or registry entries that cannot work."""


class ModelError(OfflineScorerError):
    """The judge model cannot be used: missing file, wrong digest, no chat template."""

    exit_code = 3


class GenerationError(OfflineScorerError):
    """One evaluation failed inside the model call; never scored from a partial answer."""

    exit_code = 4


class ContextOverflowError(GenerationError):
    """The prompt plus the step's output budget does not fit the model's context."""


class CassetteMissError(OfflineScorerError):
    """Replay asked for an exchange the cassette does not hold."""

    exit_code = 5


class CassetteFileError(OfflineScorerError):
    """A cassette file is damaged, foreign or from an unsupported format version."""

    exit_code = 6


class ClusterError(OfflineScorerError):
    """The Ray cluster cannot run the job: not reachable, too small, or every actor lost."""

    exit_code = 7


class SchemaError(InputError):
    """A request's output schema uses a construct the backend's constraint compiler cannot run."""
