"""Opening the service a `serve` command asked for: the judge, its identity and backend."""

from __future__ import annotations

from offline_scorer.assembly.open import JudgeSettings, open_judge, resolve
from offline_scorer.cassette.judge import CassetteJudge
from offline_scorer.errors import ModelError
from offline_scorer.serve.service import JudgeService

__all__ = ["open_service"]


def open_service(settings: JudgeSettings) -> JudgeService:
    """The judge for `settings` behind a service (replay needs the registry's pins only)."""
    judge, spec = open_judge(settings)
    if isinstance(judge, CassetteJudge):
        judge.replay_usage = True  # a replayed response reports the recorded token counts
    _, backend = resolve(settings.model, settings.backend)
    identity = judge.identity
    if identity is None:
        raise ModelError(f"model {spec.name!r} has no identity to key exchanges with")
    return JudgeService(judge, spec, identity, backend, settings.mode)
