"""Ctrl-C at item boundaries only, so an item's exchanges and its results line land together.

While deferred, SIGINT only sets a flag; the executor checks it where nothing is half written
(between items, while it waits for actors) and raises KeyboardInterrupt there. Outside the main
thread (where Python allows no signal handlers) nothing is deferred.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class Deferred:
    def __init__(self) -> None:
        self.pending = False

    def check(self) -> None:
        """Raise the deferred KeyboardInterrupt, if one arrived."""
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.pending = True


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[Deferred]:
    deferred = Deferred()
    if threading.current_thread() is not threading.main_thread():
        yield deferred
        return
    previous = signal.signal(signal.SIGINT, deferred._handle)
    try:
        yield deferred
    finally:
        signal.signal(signal.SIGINT, previous)
