"""A spinner on stderr while a judge works, shown only on a terminal.

It wraps any judge, so the scorer does not know it is there.
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from typing import TextIO

from offline_scorer.judging.protocol import (
    Completion,
    Judge,
    JudgeBase,
    JudgeIdentity,
    JudgeRequest,
)

_FRAMES = "|/-\\"


class SpinnerJudge(JudgeBase):
    """Shows progress and passes every part of the protocol through, by name."""

    def __init__(self, inner: Judge, label: str, steps: int, stream: TextIO | None = None) -> None:
        self.inner = inner
        self.label = label
        self.steps = steps
        self.stream = stream or sys.stderr
        self.step_number = 0

    @property
    def identity(self) -> JudgeIdentity | None:
        return self.inner.identity

    def runtime_versions(self) -> dict[str, str]:
        return self.inner.runtime_versions()

    def close(self) -> None:
        self.inner.close()

    def complete(self, request: JudgeRequest) -> Completion:
        self.step_number += 1
        done = threading.Event()
        start = time.monotonic()
        text = f"{self.label}: {request.step} ({self.step_number}/{self.steps})"

        def spin() -> None:
            for frame in itertools.cycle(_FRAMES):
                elapsed = time.monotonic() - start
                self.stream.write(f"\r{frame} {text} {elapsed:5.1f}s")
                self.stream.flush()
                if done.wait(0.2):
                    break
            self.stream.write("\r" + " " * (len(text) + 12) + "\r")
            self.stream.flush()

        thread = threading.Thread(target=spin, daemon=True)
        thread.start()
        try:
            return self.inner.complete(request)
        finally:
            done.set()
            thread.join()


def with_spinner(judge: Judge, label: str, steps: int) -> Judge:
    """The judge, wrapped in a spinner if stderr is a terminal."""
    return SpinnerJudge(judge, label, steps) if sys.stderr.isatty() else judge
