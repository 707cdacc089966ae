"""Options shared by every command that judges, and the judge settings they make."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from offline_scorer.cassette.judge import RecordMode
from offline_scorer.scorers.summarization.options import DEFAULT_MAX_QUESTIONS
from offline_scorer.settings import CASSETTE_ENV, THREADS_ENV


def scorer_options(command: Any) -> Any:
    """The summarization scorer's options, shared by `score` and `eval`."""
    command = click.option(
        "--scale",
        type=float,
        default=1.0,
        show_default=True,
        help="The score is multiplied by this.",
    )(command)
    return click.option(
        "--max-questions",
        type=int,
        default=DEFAULT_MAX_QUESTIONS,
        show_default=True,
        help="Upper bound on coverage questions.",
    )(command)


_MODEL_OPTIONS = [
    click.option(
        "--model",
        "model",
        default="default",
        show_default=True,
        help="Registry name, or a path to a .gguf file.",
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
    model: str,
    backend: str | None,
    threads: int | None,
    context_size: int | None,
    gpu_layers: int | None,
    cassette: Path | None,
    record_mode: str | None,
) -> Any:
    """JudgeSettings from the CLI options; the environment may force the record mode."""
    from offline_scorer.judging.open import JudgeSettings, resolve_mode

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
