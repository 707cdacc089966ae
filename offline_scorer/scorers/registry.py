"""The registry of scorer kinds: entry points of the `offline_scorer.scorers` group, plus any
spec registered in-process with `register` (tests, notebooks).

Like backends, looking kinds up imports their spec modules, never a model runtime.
"""

from __future__ import annotations

import functools
from importlib.metadata import entry_points

from offline_scorer.errors import ConfigError
from offline_scorer.plugins import load_plugin
from offline_scorer.scorers.spec import ScorerSpec

GROUP = "offline_scorer.scorers"
DEFAULT_KIND = "summarization"
"""The kind a command runs when none is named: the scorer this project re-implements."""

_REGISTERED: dict[str, ScorerSpec] = {}


@functools.cache
def _loaded() -> tuple[dict[str, ScorerSpec], dict[str, str]]:
    """(kinds that load, the problem of each that does not).

    A plugin that fails to import (a stale install, a missing dependency) must not take down
    every command, including those that never use it: it is left out, `load_problems` names
    it, and asking for its kind is a one-line error."""
    found: dict[str, ScorerSpec] = {}
    broken: dict[str, str] = {}
    for point in sorted(entry_points(group=GROUP), key=lambda ep: ep.name):
        where = f"scorer kind {point.name!r} ({point.value}, entry point of {GROUP})"
        spec, problem = load_plugin(point, "scorer kind")
        if problem is not None:
            broken[point.name] = problem
            continue
        if not isinstance(spec, ScorerSpec) or spec.kind != point.name:
            broken[point.name] = (
                f"{where} is not a ScorerSpec of that kind; fix or uninstall the package that "
                "declares it"
            )
            continue
        found.setdefault(point.name, spec)
    return found, broken


def _installed() -> dict[str, ScorerSpec]:
    return _loaded()[0]


def load_problems() -> list[str]:
    """One line per installed kind that cannot be used (and is not registered in-process)."""
    return [text for kind, text in _loaded()[1].items() if kind not in _REGISTERED]


def register(spec: ScorerSpec) -> None:
    """Make a kind known in this process (it wins over an installed one of the same name)."""
    _REGISTERED[spec.kind] = spec


def kinds() -> list[str]:
    return sorted({*_installed(), *_REGISTERED})


def specs() -> list[ScorerSpec]:
    return [get_spec(kind) for kind in kinds()]


def get_spec(kind: str) -> ScorerSpec:
    """The spec of `kind`; a one-line ConfigError naming the known kinds."""
    spec = _REGISTERED.get(kind) or _installed().get(kind)
    if spec is None and kind in _loaded()[1]:
        raise ConfigError(_loaded()[1][kind])
    if spec is None:
        known = ", ".join(kinds()) or "none (reinstall offline-scorer: pip install -e .)"
        raise ConfigError(f"unknown scorer kind {kind!r}; known kinds: {known}")
    return spec
