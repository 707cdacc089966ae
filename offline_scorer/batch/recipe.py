"""What an executor needs of a run's recipe: the protocol `assembly.RunSpec` satisfies.

Batch sits below assembly, so it never opens a judge itself: a process-pool worker or a Ray
actor receives the recipe (it pickles) and asks it for a scorer. The recipe knows the scorer
kind, its options and the judge settings; batch knows only these methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from offline_scorer.cassette.judge import Sink
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.judging.protocol import Judge
from offline_scorer.scorers.protocol import Scorer


class Recipe(Protocol):
    @property
    def kind(self) -> str:
        """The scorer kind."""
        ...

    @property
    def mode(self) -> RecordMode: ...

    @property
    def threads(self) -> int | None: ...

    def with_threads(self, threads: int) -> Recipe:
        """The same recipe with the judge's CPU threads set."""
        ...

    def with_cassette(self, path: Path) -> Recipe:
        """The same recipe reading (and in auto mode recording to) another cassette file."""
        ...

    def cassette_path(self) -> Path:
        """The cassette the run reads and writes (the default one when none was given)."""
        ...

    def prepare_cassette(self) -> None:
        """Create the cassette a recording run writes (its header holding the recipe), if
        missing."""
        ...

    def pinned_sha256(self) -> str | None:
        """The model's sha256 as the registry pins it, without reading the file."""
        ...

    def verify_model(self, expected_sha256: str | None) -> None:
        """Resolve the model here and check its file against `expected_sha256`."""
        ...

    def open_scorer(self, sink: Sink | None = None) -> Scorer:
        """A scorer over a judge opened from the settings (recording into `sink` if given)."""
        ...

    def scorer_on(self, judge: Judge) -> Scorer:
        """A scorer of this kind and options over a judge opened elsewhere."""
        ...
