"""A small first-in-first-out cache keyed by bytes, safe to share between threads.

Requests carry their output schema as a fresh, unhashable dict; its msgpack bytes identify it
exactly (key order included), so texts derived from a schema (its canonical JSON, its grammar)
are cached under those bytes by the modules that derive them.
"""

from __future__ import annotations

import threading


class BytesCache:
    """At most `size` texts; when full, the oldest entry goes first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: dict[bytes, str] = {}
        self._lock = threading.Lock()

    def get(self, key: bytes) -> str | None:
        return self._entries.get(key)

    def put(self, key: bytes, text: str) -> None:
        with self._lock:
            while len(self._entries) >= self.size:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = text

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
