"""A cassette's bytes shipped to the nodes, for replay and auto mode on machines without it.

The driver reads its cassette once, in chunks, into Ray's object store (its own memory holds
one chunk at a time); each node writes the chunks to a file in its cache, named by their
sha256, and every actor on that node opens that file read-only. The snapshot is the cassette
as the run starts: an exchange recorded during the run is written by the driver alone, so
actors never need to see it.
"""

from __future__ import annotations

import hashlib
import os
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
    size: int
    chunks: tuple[Any, ...]  # Ray object references, one per CHUNK bytes


def take(path: Path, put: Callable[[bytes], Any]) -> Snapshot:
    """Put `path`'s bytes in the object store; `put` is `ray.put`."""
    digest = hashlib.sha256()
    chunks, size = [], 0
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
            size += len(block)
            chunks.append(put(block))
    return Snapshot(digest.hexdigest(), size, tuple(chunks))


def materialize(snapshot: Snapshot) -> Path:
    """This node's copy of the snapshot, written once (atomically) and shared by its actors."""
    import ray

    target = cache_dir() / "cassettes" / f"{snapshot.sha256}.osc"
    if target.is_file() and target.stat().st_size == snapshot.size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(temp_sibling(target, (ray.get(ref) for ref in snapshot.chunks)), target)
    return target


def release(snapshot: Snapshot) -> None:
    """Remove this node's copy (an actor that still has it open keeps reading it)."""
    (cache_dir() / "cassettes" / f"{snapshot.sha256}.osc").unlink(missing_ok=True)
