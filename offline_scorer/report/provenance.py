"""What a reader needs to check a report: the digests, the judge, and the commands to run.

A table of scores is only citable with what it was derived from. `report --cassette FILE`
names the results file by its sha256 and the cassette by its content digest (definition in
`cassette.digest`), adds the judge identities and runtime versions the cassette recorded, and
writes out the commands that check each: `sha256sum`, `cassette verify --digest` and
`reproduce`. Without a cassette only the results file's sha256 is known.
"""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.batch.results import file_header
from offline_scorer.cassette.digest import ContentDigest, content_digest
from offline_scorer.files import open_binary
from offline_scorer.models.entry import KindPart
from offline_scorer.models.registry import load_registry

__all__ = ["Provenance", "file_sha256", "provenance"]


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file's bytes, read in chunks (a results file may be large)."""
    digest = hashlib.sha256()
    with open_binary(path, "results file") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class Provenance:
    results: Path
    results_sha256: str
    kind: str
    cassette: Path | None = None
    cassette_digest: ContentDigest | None = None
    data: Path | None = None

    def commands(self) -> list[str]:
        """The commands a reader runs, in order, to check what the report shows."""
        results = shlex.quote(str(self.results))
        commands = [f"sha256sum {results}  # expect {self.results_sha256}"]
        if self.cassette is None or self.cassette_digest is None:
            return commands
        cassette = shlex.quote(str(self.cassette))
        data = shlex.quote(str(self.data)) if self.data is not None else "DATA.jsonl"
        commands += [
            f"offline-scorer cassette verify {cassette} --digest {self.cassette_digest}",
            f"offline-scorer reproduce {results} --cassette {cassette} --data {data}"
            + self._recipe_flags(),
        ]
        return commands

    def _recipe_flags(self) -> str:
        """What `reproduce` needs besides the files: nothing when the results file's header
        carries the run's recipe; for a file of format 2, its kind and a note."""
        if file_header(self.results) is not None:
            return ""
        return (
            f" --scorer {shlex.quote(self.kind)}  # plus the run's scorer options and --model, "
            "if not the defaults"
        )

    def to_dict(self) -> dict[str, Any]:
        from offline_scorer.version import __version__

        digest = self.cassette_digest
        return {
            "results": str(self.results),
            "results_sha256": "sha256:" + self.results_sha256,
            "cassette": None if self.cassette is None else str(self.cassette),
            "cassette_digest": None if digest is None else str(digest),
            "cassette_exchanges": None if digest is None else digest.exchanges,
            "judges": []
            if digest is None
            else [
                {
                    "model_sha256": judge.model_sha256,
                    "chat_template_sha256": judge.chat_template_sha256,
                    "backend": judge.backend,
                    "verdict_threshold": judge.verdict_threshold,
                    **_registered(judge.model_sha256, self.kind),
                }
                for judge in digest.judges
            ],
            "runtimes": [] if digest is None else [dict(runtime) for runtime in digest.runtimes],
            "offline_scorer": __version__,
            "commands": self.commands(),
        }

    def quality_lines(self) -> list[str]:
        """What the registry says each recorded judge is worth, and a warning when it was at
        chance: shown beside the scores, because a reader must not take noise for a finding."""
        shown: list[str] = []
        for judge in [] if self.cassette_digest is None else self.cassette_digest.judges:
            found = _registered_part(judge.model_sha256, self.kind)
            if found is None:
                continue
            name, part = found
            lines, warnings = part.figures()
            shown += [f"{name}: {line}" for line in lines] + warnings
        return shown

    def lines(self) -> list[str]:
        """The digests as `eval`, `report` and `reproduce` print them."""
        shown = [f"results  sha256:{self.results_sha256}  {self.results}"]
        if self.cassette_digest is not None:
            shown.append(f"cassette {self.cassette_digest}  {self.cassette}")
        return shown


def provenance(
    results: Path, kind: str, cassette: Path | None = None, data: Path | None = None
) -> Provenance:
    """The provenance of a results file, with its cassette's when one is given."""
    digest = None if cassette is None else content_digest(cassette)
    return Provenance(results, file_sha256(results), kind, cassette, digest, data)


def _registered(model_sha256: str, kind: str) -> dict[str, Any]:
    """The registry name of the model with this sha256, its quality measured with scorer kind
    `kind`, the results', and what `calibrate --axis` measured of each axis ({} if unknown)."""
    for spec in load_registry().models.values():
        if spec.sha256 == model_sha256:
            part = spec.part(kind)
            measured = part.quality
            quality = None if measured is None else measured.model_dump()
            found: dict[str, Any] = {"model": spec.name, "quality": quality}
            if part.axes:  # absent when none: reports of judges without them keep their bytes
                found["axes"] = {
                    axis: signal.model_dump(exclude_none=True) for axis, signal in part.axes.items()
                }
            return found
    return {}


def _registered_part(model_sha256: str, kind: str) -> tuple[str, KindPart] | None:
    """The registry name of the model with this sha256 and its table for scorer kind `kind`
    (None if unknown)."""
    for spec in load_registry().models.values():
        if spec.sha256 == model_sha256:
            return spec.name, spec.part(kind)
    return None
