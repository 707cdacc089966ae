"""Why a judge's text is not shown: the check that refused it, and what it points at.

One value per check (`check` is a fixed phrase, the same whatever text failed it), so refusals
can be counted by check (`bench/bench_refusals.py`) without reading them back out of messages;
`detail` carries what differs from one refused text to the next (the word, the figures).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Refusal:
    """A check's verdict against a text: `check` names the check; `detail` is what it found."""

    check: str
    detail: str | None = None

    def __str__(self) -> str:
        return self.check if self.detail is None else f"{self.check}: {self.detail}"
