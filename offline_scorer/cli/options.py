"""Options shared by every command that judges, and the run recipe they make."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from offline_scorer.assembly.migrate.decoders import replayed_id_of_file
from offline_scorer.assembly.open import JudgeSettings, resolve_mode
from offline_scorer.assembly.recording import (
    RecordedRun,
    cassette_recipe,
    model_named_by_records,
    results_recipe,
    run_from,
    same_model,
)
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.errors import InputError
from offline_scorer.models.registry import load_registry
from offline_scorer.recorded_recipe import RecordedRecipe
from offline_scorer.scorers import registry
from offline_scorer.scorers.spec import CliOption, cli_options
from offline_scorer.settings import CASSETTE_ENV, THREADS_ENV, default_cassette


@dataclass(frozen=True)
class ScorerChoice:
    """The scorer kind a command was given and the option flags that were set."""

    kind: str
    given: Mapping[str, Any]
    kind_given: bool = False  # --scorer was on the command line (not its default)

    def options(self) -> Mapping[str, Any]:
        """The options set by flags, checked against the kind's (a flag the kind does not have
        is a one-line error); the recipe adds the judge's defaults and validates them."""
        spec = registry.get_spec(self.kind)
        own = {option.name for option in cli_options(spec.options)}
        foreign = [name for name in self.given if name not in own]
        if foreign:
            flags = ", ".join(_flag(name) for name in sorted(own)) or "none"
            raise InputError(
                f"{_flag(foreign[0])} is not an option of the {spec.kind} scorer "
                f"(its options: {flags})"
            )
        spec.make_options(dict(self.given))  # a bad value fails here, before any judge
        return dict(self.given)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _option_flags() -> dict[str, tuple[CliOption, list[str]]]:
    """Every registered kind's option flags: name -> (the first kind's declaration, kinds)."""
    flags: dict[str, tuple[CliOption, list[str]]] = {}
    for spec in registry.specs():
        for option in cli_options(spec.options):
            flags.setdefault(option.name, (option, []))[1].append(spec.kind)
    return flags


def scorer_options(command: Any) -> Any:
    """`--scorer KIND` and the option flags of every registered kind; the command receives
    them as one `scorer: ScorerChoice` argument."""
    flags = _option_flags()

    @functools.wraps(command)
    def with_choice(*args: Any, scorer_kind: str, **kwargs: Any) -> Any:
        given = {}
        for name in flags:
            value = kwargs.pop(name)
            if value is not None:
                given[name] = value
        source = click.get_current_context().get_parameter_source("scorer_kind")
        kind_given = source is not click.core.ParameterSource.DEFAULT
        return command(*args, scorer=ScorerChoice(scorer_kind, given, kind_given), **kwargs)

    wrapped: Any = with_choice
    for name, (option, owners) in reversed(flags.items()):
        wrapped = click.option(
            _flag(name),
            name,
            type=option.type,
            default=None,
            help=f"{option.help} ({', '.join(owners)} scorer)",
        )(wrapped)
    return click.option(
        "--scorer",
        "scorer_kind",
        default=registry.DEFAULT_KIND,
        show_default=True,
        help=f"The scorer kind (installed: {', '.join(registry.kinds())}).",
    )(wrapped)


_MODEL_OPTIONS = [
    click.option(
        "--model",
        "model",
        default=None,
        help="Registry name, or a path to a .gguf file (default: the registry's default; "
        "replaying a recording, the model it was recorded with).",
    ),
    click.option(
        "--backend",
        default=None,
        help="How to run the model: llama_cpp (default) or outlines; "
        "default: the registry entry's backend.",
    ),
]


def model_options(command: Any) -> Any:
    """--model and --backend: the judge's identity, for commands that run no model."""
    for option in reversed(_MODEL_OPTIONS):
        command = option(command)
    return command


def judge_options(command: Any) -> Any:
    """Options shared by every command that runs the live judge."""
    for option in reversed(
        [
            *_MODEL_OPTIONS,
            click.option(
                "--threads",
                type=click.IntRange(min=1),
                default=None,
                envvar=THREADS_ENV,
                help=f"CPU threads (default: ${THREADS_ENV}, else all cores).",
            ),
            click.option(
                "--context-size",
                type=click.IntRange(min=256),
                default=None,
                help="Context size in tokens (default: the registry's).",
            ),
            click.option(
                "--gpu-layers",
                type=click.IntRange(min=0),
                default=None,
                help="Layers to offload to a GPU (default: the registry's, 0).",
            ),
            click.option(
                "--cassette",
                type=click.Path(dir_okay=False, path_type=Path),
                default=None,
                envvar=CASSETTE_ENV,
                help="Cassette file for recording and replay "
                f"(default: ${CASSETTE_ENV}, else the user data dir).",
            ),
            click.option(
                "--record-mode",
                type=click.Choice([m.value for m in RecordMode]),
                default=None,
                help="replay: cassette only, never the model; auto: "
                "replay hits, record misses; record (default): run live, record "
                "everything; off: run live, record nothing. "
                "$OFFLINE_SCORER_RECORD_MODE overrides it.",
            ),
        ]
    ):
        command = option(command)
    return command


def judge_settings(
    *,
    model: str | None,
    backend: str | None,
    threads: int | None,
    context_size: int | None,
    gpu_layers: int | None,
    cassette: Path | None,
    record_mode: str | None,
) -> JudgeSettings:
    """JudgeSettings from the CLI options; the environment may force the record mode."""
    mode, note = resolve_mode(RecordMode(record_mode) if record_mode else None)
    if note:
        click.echo(f"note: {note}", err=True)
    return JudgeSettings(
        model=model,
        backend=backend,
        threads=threads,
        context_size=context_size,
        gpu_layers=gpu_layers,
        cassette=cassette,
        mode=mode,
    )


def run_spec(
    scorer: ScorerChoice, judge: Mapping[str, Any], results: Path | None = None
) -> RunSpec:
    """The run's recipe from a command's scorer choice and judge options, built once."""
    return recorded_run(scorer, judge_settings(**judge), results)


def recorded_run(
    scorer: ScorerChoice, settings: JudgeSettings, results: Path | None = None
) -> RunSpec:
    """The run's recipe: the one a recording carries, flags winning over it, else the flags
    over the registry's defaults.

    The recording is `results` (a results file continued or reproduced) when its header has
    a recipe, else, for a replay, the cassette's header. A --model other than the recorded one
    starts from the registry's defaults instead (a new run, not the recording's). A cassette
    made before recipes names its model by the sha256 its records hold, which a note says."""
    kind = scorer.kind if scorer.kind_given else None
    given = RecordedRun(kind, scorer.options(), settings)
    found = _recording(settings, results)
    if found is not None and same_model(found[0], settings.model, found[1]):
        return run_from(found[0], given, found[1])
    if found is None and not settings.mode.runs_model:
        path = settings.cassette or default_cassette()
        model = None if settings.model is not None else model_named_by_records(path)
        if model is not None and model != load_registry().default:
            click.echo(
                f"note: replaying with model {model!r}, the one {path} holds records of (its "
                f"header names no recipe; `offline-scorer migrate cassette {path}` writes one)",
                err=True,
            )
            settings = dataclasses.replace(settings, model=model)
        if path.is_file():  # its decoder, too, is named only by its records' keys
            answered_under = replayed_id_of_file(path, settings.model, settings.backend)
            settings = dataclasses.replace(settings, recorded_backend=answered_under)
    return RunSpec.of(scorer.kind, scorer.options(), settings)


def _recording(settings: JudgeSettings, results: Path | None) -> tuple[RecordedRecipe, Path] | None:
    """The recipe a run continues or replays, and the file holding it: the results file's
    header first, then a replayed cassette's (None: neither has one)."""
    if results is not None:
        recipe = results_recipe(results)
        if recipe is not None:
            return recipe, results
    if settings.mode.runs_model:
        return None
    path = settings.cassette or default_cassette()
    recipe = cassette_recipe(path)
    return None if recipe is None else (recipe, path)
