"""`RunSpec`: one run's recipe (scorer kind, its options, the judge settings), built once.

The CLI builds it from flags; executors, process-pool workers, Ray actors and the report get
it whole, so a run's recipe never travels as loose arguments. It pickles (workers and actors
rebuild their scorer from it) and satisfies `batch.recipe.Recipe`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.assembly.open import (
    JudgeSettings,
    open_judge,
    pinned_identity,
    replay_identity,
    replayed_backend_id,
    resolve_settings,
)
from offline_scorer.backends import Backend
from offline_scorer.batch.results import ResultsHeader
from offline_scorer.cassette.judge import Sink
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import ModelError
from offline_scorer.judging.protocol import (
    Completion,
    Judge,
    JudgeBase,
    JudgeIdentity,
    JudgeRequest,
)
from offline_scorer.models.registry import ModelSpec, load_registry
from offline_scorer.recorded_recipe import RecordedRecipe
from offline_scorer.scorers.protocol import Scorer
from offline_scorer.scorers.registry import DEFAULT_KIND, get_spec
from offline_scorer.scorers.spec import ScorerSpec
from offline_scorer.settings import default_cassette


@dataclass(frozen=True)
class RunSpec:
    kind: str
    options: Any  # an options object of the kind's options type
    judge: JudgeSettings

    @classmethod
    def of(
        cls, kind: str | None = None, options: Any = None, judge: JudgeSettings | None = None
    ) -> RunSpec:
        """A recipe with its kind looked up and its options validated (a ConfigError else).

        Options given as a mapping (or None) stand on the judge's registry defaults for the
        kind (`scorer_options`); an options object is taken whole."""
        scorer_spec = get_spec(kind or DEFAULT_KIND)
        judge = judge or JudgeSettings()
        if options is None or isinstance(options, Mapping):
            defaults = load_registry().resolve(judge.model).scorer_options.get(scorer_spec.kind, {})
            options = {**defaults, **(options or {})}
        # the judge runs at the kind's threshold
        judge = dataclasses.replace(judge, kind=scorer_spec.kind)
        return cls(scorer_spec.kind, scorer_spec.make_options(options), judge)

    @property
    def spec(self) -> ScorerSpec:
        return get_spec(self.kind)

    @property
    def mode(self) -> RecordMode:
        return self.judge.mode

    @property
    def threads(self) -> int | None:
        return self.judge.threads

    def with_threads(self, threads: int) -> RunSpec:
        return dataclasses.replace(self, judge=dataclasses.replace(self.judge, threads=threads))

    def with_cassette(self, path: Path) -> RunSpec:
        return dataclasses.replace(self, judge=dataclasses.replace(self.judge, cassette=path))

    def cassette_path(self) -> Path:
        return self.judge.cassette or default_cassette()

    def model(self) -> ModelSpec:
        """The registry entry of the judge's model (no file read)."""
        return load_registry().resolve(self.judge.model).for_kind(self.kind)

    def backend(self) -> Backend:
        """The backend the judge runs on: the one asked for, else the registry entry's."""
        return resolve_settings(self.judge)[1]

    def pinned_sha256(self) -> str | None:
        return self.model().sha256

    def pinned_identity(self) -> JudgeIdentity | None:
        """The judge's identity from the registry's pins, without loading the model; None
        when the registry does not pin it (a GGUF given by path)."""
        model_spec, backend = resolve_settings(self.judge)
        return pinned_identity(model_spec, backend, replayed_backend_id(self.judge, backend))

    def identity(self) -> JudgeIdentity | None:
        """The judge's identity: the registry's pins when it has them, else read from the
        model (loaded without a cassette, then freed)."""
        pinned = self.pinned_identity()
        if pinned is not None:
            return pinned
        if not self.judge.mode.runs_model:  # a GGUF given by path: the cassette says
            model_spec, backend = resolve_settings(self.judge)
            recorded_backend = replayed_backend_id(self.judge, backend)
            return replay_identity(model_spec, backend, self.cassette_path(), recorded_backend)
        live, _model = open_judge(dataclasses.replace(self.judge, mode=RecordMode.OFF))
        with live:
            return live.identity

    def identity_judge(self) -> Judge:
        """A judge that only knows the identity: for a driver whose workers do the judging
        (the scorer built on it gives the run's digest context, and answers nothing)."""
        self.prepare_cassette()
        return _IdentityOnly(self.identity())

    def verify_model(self, expected_sha256: str | None) -> None:
        """Resolve the model through this machine's registry and check its file's digest."""
        model_spec = self.model()
        _path, actual = model_spec.verify()
        if expected_sha256 is not None and actual != expected_sha256:
            raise ModelError(
                f"model {model_spec.name!r} at {model_spec.display_file} has sha256 {actual}, "
                f"expected {expected_sha256}; install the pinned file on this node"
            )

    def recorded(self) -> RecordedRecipe:
        """This recipe as a recording carries it (a cassette's header, a results header):
        the model by name and pinned sha256, the backend (the id it answers under: a replay
        of an earlier decoder's records names that decoder), threshold and every option."""
        model_spec, backend = resolve_settings(self.judge)
        identity = self.pinned_identity()
        return RecordedRecipe(
            scorer=self.kind,
            options=self.spec.recorded_options(self.options),
            model=model_spec.name,
            model_sha256=model_spec.sha256,
            backend=backend.name,
            backend_id=backend.backend_id if identity is None else identity.backend,
            verdict_threshold=(
                identity.verdict_threshold
                if identity is not None
                else model_spec.verdict_threshold
                if backend.verdict_probabilities
                else None
            ),
            revisions=dict(self.spec.revisions),
        )

    def results_header(self) -> str:
        """The header line a results file of this run opens with: its recipe."""
        return ResultsHeader(recipe=self.recorded().to_map()).to_line()

    def prepare_cassette(self) -> None:
        """Create the cassette a recording run writes, its header holding this recipe, when
        it does not exist yet (a cassette that exists keeps the header it was made with)."""
        if not self.mode.writes:
            return
        path = self.cassette_path()
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        CassetteFile(path, create=True, recipe=self.recorded().to_map()).close()

    def open_judge(self, sink: Sink | None = None) -> tuple[Judge, ModelSpec]:
        if sink is None:
            self.prepare_cassette()
        return open_judge(self.judge, sink=sink)

    def scorer_on(self, judge: Judge) -> Scorer:
        return self.spec.build(judge, self.options)

    def open_scorer(self, sink: Sink | None = None) -> Scorer:
        judge, _model = self.open_judge(sink)
        return self.scorer_on(judge)


class _IdentityOnly(JudgeBase):
    def __init__(self, identity: JudgeIdentity | None) -> None:
        self._identity = identity

    @property
    def identity(self) -> JudgeIdentity | None:
        return self._identity

    def complete(self, request: JudgeRequest) -> Completion:
        raise AssertionError("the driver's judge answers nothing: its workers judge")
