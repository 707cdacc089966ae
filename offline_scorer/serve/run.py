"""Opening the service a `serve` command asked for: the judge, its identity and backend."""

from __future__ import annotations

from offline_scorer.assembly.open import JudgeSettings, open_recorder, resolve
from offline_scorer.serve.service import JudgeService

__all__ = ["open_service"]


def open_service(settings: JudgeSettings) -> JudgeService:
    """The judge for `settings` behind a service (replay needs the registry's pins only); a
    replayed response reports the recorded token counts, as a live one reports its own."""
    judge, spec = open_recorder(settings, replay_usage=True)
    _, backend = resolve(settings.model, settings.backend)
    return JudgeService(judge, spec, backend)
