"""`offline-scorer models ...` and `grammars ...`: the registry's models and generated grammars."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from offline_scorer.errors import InputError, ModelError, OfflineScorerError

if TYPE_CHECKING:
    from offline_scorer.models.registry import ModelSpec


@click.group()
def models() -> None:
    """The model registry: list, verify, install and remove models."""


def _megabytes(size: int | None) -> str:
    return "unknown" if size is None else f"{size / 1e6:.1f} MB"


def _state(spec: ModelSpec) -> tuple[str, int | None]:
    """What `models list` says of a model's file, and its size: the file's when it is there,
    else the size the entry pins (what an install would download)."""
    from offline_scorer.models.install import installed

    if spec.parts is not None and not installed(spec):
        return f"not installed: offline-scorer models install {spec.name}", spec.size
    try:
        size = spec.locate().stat().st_size
    except OfflineScorerError as error:
        return f"missing: {error}", spec.size
    if spec.sha256 is None:
        return "installed, unpinned (fingerprinted on first use)", size
    try:
        spec.verify()
    except OfflineScorerError:
        return f"installed, NOT verified (run `offline-scorer models verify {spec.name}`)", size
    return "installed, verified", size


@models.command("list")
def models_list() -> None:
    """Name, file, size, installation state and measured quality of each registered model."""
    from offline_scorer.models.registry import load_registry
    from offline_scorer.settings import user_registry_path

    registry = load_registry()
    for name, spec in sorted(registry.models.items()):
        marker = " (default)" if name == registry.default else ""
        state, size = _state(spec)
        click.echo(f"{name}{marker}")
        click.echo(f"  file:  {spec.display_file}")
        click.echo(f"  size:  {_megabytes(size)}")
        click.echo(f"  state: {state}")
        for line in _figures(spec):
            click.echo(f"  {line}")
    click.echo(f"user registry: {user_registry_path()}")


def _figures(spec: ModelSpec) -> list[str]:
    """Each scorer kind's threshold and measured quality on this judge, kind by kind: a
    kind's figures say nothing of another's, so none is shown under a kind it was not
    measured with."""
    shown = []
    for kind, part in sorted(spec.scorers.items()):
        if part.verdict_threshold is None and part.quality is None:
            continue
        threshold = spec.threshold_for(kind)
        shown.append(f"{kind}: verdict threshold {threshold}")
        lines, _ = part.figures()  # the judged axis's figures, then each other axis's
        shown += [f"  {line}" for line in lines or ["quality: not measured"]]
    return shown or ["quality: not measured"]


def _needs_no_install(spec: ModelSpec) -> str:
    """The line for a model whose file is not offline-scorer's to install; a ModelError when
    its package is missing, as the model is not usable after the command."""
    if spec.path is not None:
        return f"model {spec.name!r} needs no install: its file is {spec.path}"
    spec.locate()  # a missing package: one line with the pip command that installs it
    return f"model {spec.name!r} needs no install: it comes with the Python package {spec.package}"


def _installed_line(spec: ModelSpec, path: Path, verb: str) -> str:
    return f"{verb} {spec.name}: {path} ({path.stat().st_size} bytes, sha256 verified)"


@models.command("install")
@click.argument("name")
@click.option(
    "--wheels",
    "wheels_dir",
    type=click.Path(path_type=Path),
    help="A folder holding the parts' wheels (no network needed): pip takes them from there.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a byte progress bar on stderr (default: when stderr is a terminal).",
)
def models_install(name: str, wheels_dir: Path | None, progress: bool | None) -> None:
    """Download a model made of parts and assemble it in the user data dir, verified."""
    from offline_scorer.models.install import install, installed
    from offline_scorer.models.registry import load_registry

    spec = load_registry().resolve(name)
    if spec.parts is None:
        click.echo(_needs_no_install(spec))
        return
    if wheels_dir is not None and not wheels_dir.is_dir():
        raise InputError(f"--wheels: {wheels_dir} is not a folder")
    if installed(spec):
        try:
            path, _ = spec.verify()
        except ModelError as error:
            click.echo(f"warning: {error}; installing it again", err=True)
        else:
            click.echo(_installed_line(spec, path, "already installed"))
            return
    with _sigterm_as_exit():
        path = install(spec, wheels_dir=wheels_dir, progress=progress)
    click.echo(_installed_line(spec, path, "installed"))


@models.command("remove")
@click.argument("name")
def models_remove(name: str) -> None:
    """Delete a model that `models install` assembled, with any leftover download."""
    from offline_scorer.models.install import installed, remove
    from offline_scorer.models.registry import load_registry

    spec = load_registry().resolve(name)
    if spec.parts is None:
        what = f"delete {spec.path}" if spec.path else f"uninstall the package {spec.package}"
        raise ModelError(f"model {spec.name!r} was not installed by offline-scorer: {what} instead")
    was_installed = installed(spec)
    freed = remove(spec)
    if was_installed:
        click.echo(f"removed {spec.name}: {spec.install_path} ({_megabytes(freed)} freed)")
    elif freed:
        click.echo(f"model {spec.name!r} was not installed; {_megabytes(freed)} of leftovers freed")
    else:
        click.echo(f"model {spec.name!r} is not installed; nothing to remove")


@contextlib.contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """SIGTERM raises SystemExit(143) inside the block, so the clean-up that an exception runs
    (the half-written model deleted, pip stopped) runs for it too, as it does for Ctrl-C."""

    def _exit(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@models.command("verify")
@click.argument("name", required=False)
def models_verify(name: str | None) -> None:
    """Check that a model's file exists and matches its pinned sha256 (all models if no NAME).

    Without NAME, a judge that is not installed is reported and skipped unless it is the
    default: an optional judge left out is a choice, not a fault. A mismatch, a missing
    default, a missing file of a path entry, or a NAME asked for and absent exits non-zero."""
    from offline_scorer.models.registry import load_registry

    registry = load_registry()
    names = [name] if name else sorted(registry.models)
    failed = None
    for spec in (registry.resolve(n) for n in names):
        if not name and spec.name != registry.default and not spec.is_installed():
            click.echo(
                f"--   {spec.name}: not installed (optional; `offline-scorer models install "
                f"{spec.name}` adds it)"
            )
            continue
        try:
            path, digest = spec.verify()
        except OfflineScorerError as error:
            click.echo(f"FAIL {spec.name}: {error}", err=True)
            failed = failed or error
            continue
        pinned = "matches the pinned sha256" if spec.sha256 else "no pinned sha256 to compare"
        click.echo(f"ok   {spec.name}: {path} sha256 {digest} ({pinned})")
    if failed is not None:
        sys.exit(failed.exit_code)


@click.group()
def grammars() -> None:
    """The generated GBNF grammars in grammars/."""


@grammars.command("regenerate")
@click.option(
    "--dir",
    "directory",
    default="grammars",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
)
@click.option("--check", is_flag=True, help="Only report drift; exit 1 if any file is stale.")
def grammars_regenerate(directory: Path, check: bool) -> None:
    """Write the default-settings grammars generated from the output schemas."""
    from offline_scorer.assembly.grammar_files import stale_files, write_files

    if check:
        stale = stale_files(directory)
        for name in stale:
            click.echo(f"stale: {directory / name}", err=True)
        if stale:
            sys.exit(1)
        click.echo(f"{directory}: up to date")
        return
    written = write_files(directory)
    done = f"wrote {', '.join(written)}" if written else "up to date"
    click.echo(f"{directory}: {done}")
