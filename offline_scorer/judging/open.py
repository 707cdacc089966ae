"""Building the judge a command asked for: live, replayed, or live behind a recorder.

Replay never imports the model runtime: the model's identity comes from the registry's pinned
digests, so a cassette replays on a machine without the model file or llama-cpp-python.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from platformdirs import user_data_dir

from offline_scorer.backends.llama_cpp import BACKEND_ID
from offline_scorer.cassette.judge import CassetteJudge, RecordMode, forced_mode
from offline_scorer.errors import ModelError
from offline_scorer.judging.protocol import Judge, JudgeIdentity
from offline_scorer.models.registry import ModelSpec, load_registry

if TYPE_CHECKING:
    from offline_scorer.backends.llama_cpp.judge import LlamaJudge

CASSETTE_ENV = "OFFLINE_SCORER_CASSETTE"


def default_cassette() -> Path:
    env = os.environ.get(CASSETTE_ENV)
    if env:
        return Path(env)
    return Path(user_data_dir("offline-scorer")) / "recordings.oscas"


def pinned_identity(spec: ModelSpec) -> JudgeIdentity | None:
    if spec.sha256 and spec.chat_template_sha256:
        return JudgeIdentity(
            spec.sha256, spec.chat_template_sha256, BACKEND_ID, spec.verdict_threshold
        )
    return None


@dataclass
class JudgeSettings:
    model: str | None = None
    threads: int | None = None
    context_size: int | None = None
    gpu_layers: int | None = None
    cassette: Path | None = None
    mode: RecordMode = RecordMode.RECORD


def resolve_mode(requested: RecordMode | None) -> tuple[RecordMode, str | None]:
    """(mode, note): the environment's forced mode wins, with a note when it overrode a flag."""
    forced = forced_mode()
    if forced is not None:
        note = None
        if requested is not None and requested is not forced:
            note = (
                f"OFFLINE_SCORER_RECORD_MODE={forced.value} overrides --record-mode "
                f"{requested.value}"
            )
        return forced, note
    return requested or RecordMode.RECORD, None


def open_judge(settings: JudgeSettings) -> tuple[Judge, ModelSpec]:
    """The judge for these settings, and the registry entry it stands for."""
    spec = load_registry().resolve(settings.model)

    def live() -> LlamaJudge:
        try:
            from offline_scorer.backends.llama_cpp.judge import LlamaJudge
        except ImportError as error:
            raise ModelError(
                f"the live judge needs the 'live' extra ({error.name} is missing): run "
                "`pip install 'offline-scorer[live]'` (see README), or replay a cassette with "
                "--record-mode replay"
            ) from None

        return LlamaJudge(
            spec,
            threads=settings.threads,
            context_size=settings.context_size,
            gpu_layers=settings.gpu_layers,
        )

    mode = settings.mode
    if mode is RecordMode.OFF:
        return live(), spec
    path = settings.cassette or default_cassette()
    identity = pinned_identity(spec)
    if mode is RecordMode.REPLAY:
        if identity is None:
            raise ModelError(
                f"model {spec.name!r} has no pinned sha256 and chat_template_sha256 in the "
                "registry; replay needs both to match recorded exchanges without the model"
            )
        return CassetteJudge(path, mode=mode, identity=identity, live=None), spec
    if identity is None or mode is RecordMode.RECORD:
        judge = live()
        return CassetteJudge(path, mode=mode, identity=judge.identity, live=judge), spec
    return CassetteJudge(path, mode=mode, identity=identity, live=live), spec
