"""A cassette's bytes shipped to the nodes, for replay and auto mode on machines without it.

The driver reads its cassette once, in chunks, into Ray's object store (its own memory holds
one chunk at a time); each actor writes the chunks to a private file in its node's cache
folder, opens it and removes it at once. The snapshot is the cassette as the run starts: an
exchange recorded during the run is written by the driver alone, and an actor never needs it
(a repeated request the driver then writes once, as a serial run would).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.files import temp_sibling
from offline_scorer.settings import cache_dir

CHUNK = 8 << 20


@dataclass(frozen=True)
class Snapshot:
    sha256: str
    chunks: tuple[Any, ...]  # Ray object references, one per CHUNK bytes


def take(path: Path, put: Callable[[bytes], Any]) -> Snapshot:
    """Put `path`'s bytes in the object store; `put` is `ray.put`."""
    digest = hashlib.sha256()
    chunks = []
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
            chunks.append(put(block))
    return Snapshot(digest.hexdigest(), tuple(chunks))


def materialize(snapshot: Snapshot) -> Path:
    """A private copy of the snapshot on this node; the caller opens it, then `release`s it
    (an open file stays readable), so nothing is left behind even if the actor is killed."""
    import ray

    folder = cache_dir() / "cassettes"
    folder.mkdir(parents=True, exist_ok=True)
    return temp_sibling(folder / f"{snapshot.sha256}.osc", (ray.get(r) for r in snapshot.chunks))


def release(copy: Path) -> None:
    copy.unlink(missing_ok=True)
