"""Backends turn a registry entry into a live judge. Each one registers under the
`offline_scorer.backends` entry-point group (the built-ins too), so a plugin package adds one
without touching this code. Looking a backend up never imports its model runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol, cast

from offline_scorer.errors import ConfigError
from offline_scorer.judging.protocol import Judge
from offline_scorer.models.registry import ModelSpec
from offline_scorer.plugins import load_plugin

GROUP = "offline_scorer.backends"


@dataclass(frozen=True)
class LoadOptions:
    """Runtime settings a command may override over the registry entry's."""

    threads: int | None = None
    context_size: int | None = None
    gpu_layers: int | None = None


class Backend(Protocol):
    name: str
    # The decoding method as it enters cassette keys, naming the compiler (and its version) that
    # turns a request's schema into what the decoder runs: known without loading anything, so
    # a cassette replays on a machine without the runtime.
    backend_id: str
    verdict_probabilities: bool  # whether its completions carry P(true) per verdict

    def load(self, spec: ModelSpec, options: LoadOptions) -> Judge: ...

    def schema_problem(self, schema: Mapping[str, Any]) -> str | None:
        """Why this backend cannot decode under `schema` (None: it can), without a model: a
        server refuses such a request before it waits for the model."""
        ...


def backend_names() -> list[str]:
    return sorted({ep.name for ep in entry_points(group=GROUP)})


def get_backend(name: str) -> Backend:
    """The backend registered as `name`; a one-line ConfigError naming the installed ones."""
    found = [ep for ep in entry_points(group=GROUP) if ep.name == name]
    if not found:
        known = ", ".join(backend_names()) or "none (reinstall offline-scorer: pip install -e .)"
        raise ConfigError(f"unknown backend {name!r}; installed backends: {known}")
    backend, problem = load_plugin(found[0], "backend")
    if problem is not None:  # a stale install or a missing runtime: say which, no traceback
        raise ConfigError(problem)
    return cast(Backend, backend)
