"""Why a judge's text is not shown: the check that refused it, and what it points at.

One value per check (`check` is a fixed phrase, the same whatever text failed it), so refusals
can be counted by check (`benchmarks.refusals`) without reading them back out of messages;
`detail` carries what differs from one refused text to the next (the word, the figures), and
`by` names the check function that refused (the checks stand in ordered tables, one per kind of
text: `reason_checks.REASON_CHECKS`, `evidence.QUOTE_CHECKS`,
`explanation_checks.EXPLANATION_CHECKS`; `first_refusal` runs one).
Each place that decides whether a person sees a judge's text tells its refusal to `noted`, so a
bench can `watch` them without reaching into the checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TypeVar


@dataclass(frozen=True)
class Refusal:
    """A check's verdict against a text: `check` names the check; `detail` is what it found."""

    check: str
    detail: str | None = None
    by: str | None = field(default=None, compare=False, repr=False)
    """The name of the check function that refused (set by `first_refusal`): which row of a
    table a text failed. Not part of what a person reads, nor of equality."""

    def __str__(self) -> str:
        return self.check if self.detail is None else f"{self.check}: {self.detail}"


@dataclass(frozen=True)
class RefusedText:
    """One refusal as a watcher sees it: the check's verdict, the text refused, and what the
    text was about (its claim, its question, or for the explanation the facts it explains)."""

    refusal: Refusal
    text: str
    subject: str | None


_WATCHING: ContextVar[list[RefusedText] | None] = ContextVar("refusals_watched", default=None)


@contextmanager
def watch() -> Iterator[list[RefusedText]]:
    """Every text refused inside the block, in the order the checks refused them: how a
    benchmark counts refusals by check (`benchmarks.refusals`) while the scorer decides exactly
    as it does in `eval`. Outside a block nothing is kept."""
    refused: list[RefusedText] = []
    token = _WATCHING.set(refused)
    try:
        yield refused
    finally:
        _WATCHING.reset(token)


def noted(refusal: Refusal | None, text: str, subject: str | None) -> Refusal | None:
    """`refusal`, told to whoever `watch`es: each place that decides whether a person sees a
    judge's text passes its verdict through here."""
    if refusal is not None:
        refused = _WATCHING.get()
        if refused is not None:
            refused.append(RefusedText(refusal, text, subject))
    return refusal


Checked = TypeVar("Checked")


def first_refusal(
    checks: Iterable[Callable[[Checked], Refusal | None]], checked: Checked
) -> Refusal | None:
    """The first refusal of a table of checks, run in order, marked with the check's name
    (`Refusal.by`); None when every check lets the text through."""
    for check in checks:
        found = check(checked)
        if found is not None:
            return replace(found, by=check.__name__)
    return None
