"""Opening the judge a command asked for: live, replayed, or live behind a recorder.

Replay never imports the model runtime: the model's identity comes from the registry's pinned
digests, so a cassette replays on a machine without the model file or llama-cpp-python.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from offline_scorer.backends import Backend, LoadOptions, get_backend
from offline_scorer.backends.gguf import gguf_chat_template
from offline_scorer.cassette.judge import CassetteJudge, LiveFactory, Sink
from offline_scorer.cassette.modes import RecordMode, forced_mode
from offline_scorer.cassette.records import recorded_judges
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import ConfigError, ModelError
from offline_scorer.formats import RECORDED_BACKEND_IDS
from offline_scorer.judging.protocol import Judge, JudgeIdentity
from offline_scorer.models.checksums import file_sha256
from offline_scorer.models.entry import GGUF_TEMPLATE
from offline_scorer.models.registry import ModelSpec, load_registry, template_sha256
from offline_scorer.settings import RECORD_MODE_ENV, default_cassette


def pinned_identity(
    spec: ModelSpec, backend: Backend | None = None, recorded_backend: str | None = None
) -> JudgeIdentity | None:
    """The identity a live judge would have, from the registry's pins alone (for replay);
    `recorded_backend`, the backend id a recording names, replays it under that id when the
    backend has recorded under it (`formats.RECORDED_BACKEND_IDS`)."""
    backend = backend or get_backend(spec.backend)
    backend_id = backend.backend_id
    if recorded_backend is not None and recorded_backend != backend_id:
        if not recorded_under(backend, recorded_backend):
            raise ConfigError(
                f"{recorded_backend!r} is not an id the {backend.name} backend ever recorded under"
            )
        backend_id = recorded_backend
    if spec.sha256 and spec.chat_template_sha256:
        threshold = spec.verdict_threshold if backend.verdict_probabilities else None
        return JudgeIdentity(spec.sha256, spec.chat_template_sha256, backend_id, threshold)
    return None


def resolve(
    model: str | None, backend: str | None, kind: str | None = None
) -> tuple[ModelSpec, Backend]:
    """The registry entry of `model` as scorer kind `kind` sees it (its threshold, so a judge
    opened from it decides that kind's verdicts at the kind's calibrated point; None: the
    summarization kind's), and the backend to run it with: the one asked for, else the entry's."""
    spec = load_registry().resolve(model)
    if kind is not None:
        spec = spec.for_kind(kind)
    return spec, get_backend(backend or spec.backend)


def recorded_under(backend: Backend, backend_id: str) -> bool:
    """Whether `backend` has keyed records under `backend_id`: its current id, or one its
    earlier decoders used (`formats.RECORDED_BACKEND_IDS`)."""
    return backend_id == backend.backend_id or backend_id in RECORDED_BACKEND_IDS.get(
        backend.name, ()
    )


def replayed_backend_id(settings: JudgeSettings, backend: Backend) -> str | None:
    """The backend id a replay answers under when it is not the backend's current one (None:
    the current one): the settings' `recorded_backend`, else the id the cassette's recipe
    names, if `backend` (the settings' backend) has recorded under it.

    A replay answers what was recorded, under the id it was recorded with: a cassette made by
    an earlier decoder keeps replaying, and its results' digests name that decoder, so a run
    made before a decoder change re-derives to its bytes. Only a replay: a judge that may
    record keys what it records under its current id."""
    if settings.mode.runs_model:
        return None
    if settings.recorded_backend is not None:
        return settings.recorded_backend
    path = settings.cassette or default_cassette()
    if not path.is_file():
        return None
    with CassetteFile(path, create=False) as recorded:
        recipe = recorded.recipe
    named = recipe.get("backend_id") if recipe is not None else None
    if not isinstance(named, str) or named == backend.backend_id:
        return None
    return named if recorded_under(backend, named) else None


def require_pinned(
    spec: ModelSpec, backend: Backend, purpose: str, recorded_backend: str | None = None
) -> JudgeIdentity:
    """The pinned identity, or a one-line ModelError saying that `purpose` needs the pins."""
    identity = pinned_identity(spec, backend, recorded_backend)
    if identity is None:
        raise ModelError(
            f"model {spec.name!r} has no pinned sha256 and chat_template_sha256 in the "
            f"registry; {purpose} needs both to match recorded exchanges without the model"
        )
    return identity


def replay_identity(
    spec: ModelSpec, backend: Backend, cassette: Path, recorded_backend: str | None = None
) -> JudgeIdentity:
    """The identity a replay answers under: the registry's pins; for a GGUF given by path
    (no pins), the file's own fingerprint when the file is there (its sha256, and the digest of
    the chat template its metadata holds: what the live judge keyed its records with), else the
    judge the cassette's records name, the only one it holds."""
    pinned = pinned_identity(spec, backend, recorded_backend)
    if pinned is not None or spec.path is None or spec.origin != "--model":
        return require_pinned(spec, backend, "replay", recorded_backend)
    backend_id = recorded_backend or backend.backend_id
    fingerprint = file_identity(spec, backend, backend_id)
    if fingerprint is not None:
        return fingerprint
    digest = file_sha256(spec.path) if spec.path.is_file() else None
    judges: set[tuple[str, str, float | None]] = set()
    if cassette.is_file():
        with CassetteFile(cassette, create=False) as recorded:
            judges = recorded_judges(recorded, backend_id)
    found = sorted(
        (j for j in judges if digest is None or j[0] == digest), key=lambda j: (j[0], j[1])
    )
    if len(found) != 1:
        what = "no records" if not found else f"records of {len(found)} different judges"
        raise ModelError(
            f"{cassette} holds {what} of the model file {spec.path} (by its sha256) for the "
            f"{backend.name} backend; replay it with the model file it was recorded from, or "
            "register the model with its pins (README, Models)"
        )
    model, template, threshold = found[0]
    return JudgeIdentity(model, template, backend_id, threshold)


def file_identity(spec: ModelSpec, backend: Backend, backend_id: str) -> JudgeIdentity | None:
    """The identity a live judge of the model file at `spec.path` has, read without loading
    it (None: no file, or no chat template it holds or the entry gives)."""
    if spec.path is None or not spec.path.is_file():
        return None
    template: str | None = spec.chat_template
    if template == GGUF_TEMPLATE:
        template = gguf_chat_template(spec.path)
    if not template:
        return None
    threshold = spec.verdict_threshold if backend.verdict_probabilities else None
    return JudgeIdentity(file_sha256(spec.path), template_sha256(template), backend_id, threshold)


def load_live(backend: Backend, spec: ModelSpec, options: LoadOptions) -> Judge:
    """The backend's live judge for `spec`; a missing runtime is one ModelError line."""
    try:
        return backend.load(spec, options)
    except ImportError as error:
        raise ModelError(
            f"the {backend.name} backend needs the 'live' extra ({error.name} is missing): "
            "run scripts/setup or `pip install 'offline-scorer[live]'` (see README), or "
            "replay a cassette with --record-mode replay"
        ) from None


@dataclass(frozen=True)
class JudgeSettings:
    """How to open the judge: which model and backend, runtime settings, cassette and mode."""

    model: str | None = None
    threads: int | None = None
    context_size: int | None = None
    gpu_layers: int | None = None
    cassette: Path | None = None
    mode: RecordMode = RecordMode.RECORD
    backend: str | None = None  # overrides the registry entry's backend
    kind: str | None = None  # the scorer kind judged: whose threshold (None: summarization's)
    recorded_backend: str | None = None
    """Replay only: the backend id the recording was made under, when the cassette's recipe
    does not say it (None: the recipe's, else the backend's current id; `replayed_backend_id`)."""
    verdict_threshold: float | None = None
    """The verdict threshold a recording was made at, when it is not the registry's today
    (None: the registry's for the kind): a moved default must not strand old recordings."""


def resolve_settings(settings: JudgeSettings) -> tuple[ModelSpec, Backend]:
    """`resolve` for a judge's settings: the entry as the settings' kind sees it, at the
    settings' verdict threshold when they carry one (a recording's)."""
    spec, backend = resolve(settings.model, settings.backend, settings.kind)
    threshold = settings.verdict_threshold
    if threshold is not None and threshold != spec.verdict_threshold:
        spec = spec.model_copy(update={"verdict_threshold": threshold})
    return spec, backend


def resolve_mode(requested: RecordMode | None) -> tuple[RecordMode, str | None]:
    """(mode, note): the environment's forced mode wins, with a note when it overrode a flag."""
    forced = forced_mode()
    if forced is not None:
        note = None
        if requested is not None and requested is not forced:
            note = f"{RECORD_MODE_ENV}={forced.value} overrides --record-mode {requested.value}"
        return forced, note
    return requested or RecordMode.RECORD, None


def open_judge(
    settings: JudgeSettings, sink: Sink | None = None, *, replay_usage: bool = False
) -> tuple[Judge, ModelSpec]:
    """The judge for these settings, and the registry entry it stands for.

    With a `sink` (a cluster actor's), recorded exchanges go there instead of the cassette,
    which is then only read (replay and auto) and in record mode not opened at all. With
    `replay_usage`, a replayed answer carries the recorded token counts (a server's)."""
    spec, backend = resolve_settings(settings)

    def live() -> Judge:
        options = LoadOptions(settings.threads, settings.context_size, settings.gpu_layers)
        return load_live(backend, spec, options)

    mode = settings.mode
    if settings.recorded_backend is not None and mode.runs_model:
        raise ConfigError(
            "records made under another backend id can only be replayed: use --record-mode "
            "replay, or record them again"
        )
    if not mode.uses_cassette:
        return live(), spec
    path: Path | None = settings.cassette or default_cassette()
    if sink is not None and not mode.reads:
        path = None
    if mode.needs_recording:
        assert path is not None
        pinned = replay_identity(spec, backend, path, replayed_backend_id(settings, backend))
        replay = CassetteJudge(path, mode=mode, identity=pinned, replay_usage=replay_usage)
        return replay, spec
    identity = pinned_identity(spec, backend)
    answering: Judge | LiveFactory = live  # loaded at the first miss
    if identity is None or mode.runs_every_request:
        answering = live()
        if answering.identity is None:
            raise ModelError(f"the {backend.name} backend's judge has no identity to record")
        identity = answering.identity
    recorder = CassetteJudge(
        path, mode=mode, identity=identity, live=answering, sink=sink, replay_usage=replay_usage
    )
    return recorder, spec


def open_recorder(
    settings: JudgeSettings, *, replay_usage: bool = False
) -> tuple[CassetteJudge, ModelSpec]:
    """`open_judge`, as a `CassetteJudge` in every mode (in mode off it passes each request to
    the model and keeps nothing): for a caller that asks the judge for keys and hits (the
    server), whatever the mode."""
    judge, spec = open_judge(settings, replay_usage=replay_usage)
    if isinstance(judge, CassetteJudge):
        return judge, spec
    if judge.identity is None:
        raise ModelError(f"model {spec.name!r} has no identity to key exchanges with")
    return CassetteJudge(None, mode=settings.mode, identity=judge.identity, live=judge), spec


def get_judge(
    name_or_path: str | None = None,
    *,
    cassette: str | Path | None = None,
    record_mode: RecordMode | str | None = None,
    threads: int | None = None,
    kind: str | None = None,
) -> Judge:
    """The judge a registry name (None: the default) or a .gguf path stands for, as a library
    user asks for it (like `llm.get_model`): live and unrecorded without a cassette; with one,
    recording there (`record`, the commands' default) or in the mode given, `replay` needing
    neither the model file nor the runtime. It is a context manager; close it to free the model
    and flush the cassette."""
    mode = RecordMode(record_mode) if record_mode is not None else None
    if mode is None:
        mode = RecordMode.RECORD if cassette is not None else RecordMode.OFF
    if mode.uses_cassette and cassette is None:
        raise ConfigError(f"record mode {mode.value!r} needs a cassette: pass cassette=PATH")
    path = Path(cassette) if cassette is not None else None
    settings = JudgeSettings(
        model=name_or_path, threads=threads, cassette=path, mode=mode, kind=kind
    )
    return open_judge(settings)[0]
