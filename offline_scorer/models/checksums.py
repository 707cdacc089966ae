"""sha256 of model files, cached by (path, size, mtime) so a 100 MB GGUF is hashed once.

The cache is only a shortcut: a file whose size or mtime changed is hashed again, and a cache
that cannot be read or written is ignored (it never changes a verification result).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from offline_scorer.files import atomic_write_text
from offline_scorer.settings import cache_dir


def _cache_file() -> Path:
    return cache_dir() / "digests.json"


def _load() -> dict[str, dict[str, int | str]]:
    try:
        data = json.loads(_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _store(entries: dict[str, dict[str, int | str]]) -> None:
    target = _cache_file()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, json.dumps(entries, indent=1, sort_keys=True))
    except OSError:
        pass


def file_sha256(path: Path) -> str:
    """Hex sha256 of `path`, from the cache when size and mtime are unchanged."""
    resolved = path.resolve()
    stat = resolved.stat()
    key = str(resolved)
    entries = _load()
    hit = entries.get(key)
    if (
        isinstance(hit, dict)
        and hit.get("size") == stat.st_size
        and hit.get("mtime_ns") == stat.st_mtime_ns
        and isinstance(hit.get("sha256"), str)
    ):
        return str(hit["sha256"])
    digest = hashlib.sha256()
    with resolved.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    entries[key] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": value}
    _store(entries)
    return value


def record_sha256(path: Path, digest: str) -> None:
    """Remember `digest` for `path` as it is now, for a file whose bytes were hashed while it
    was written (an installed model): its first use then needs no second pass over it."""
    resolved = path.resolve()
    stat = resolved.stat()
    entries = _load()
    entries[str(resolved)] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest}
    _store(entries)
