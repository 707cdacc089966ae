"""`offline-scorer models ...` and `grammars ...`: the registry's models and generated grammars."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from offline_scorer.errors import OfflineScorerError


@click.group()
def models() -> None:
    """The model registry: list and verify models."""


def _size(spec: Any) -> str:
    try:
        return f"{spec.locate().stat().st_size / 1e6:.1f} MB"
    except OfflineScorerError:
        return "missing"


@models.command("list")
def models_list() -> None:
    """Name, file, size and verification state of each registered model."""
    from offline_scorer.models.registry import load_registry
    from offline_scorer.settings import user_registry_path

    registry = load_registry()
    for name, spec in sorted(registry.models.items()):
        marker = " (default)" if name == registry.default else ""
        if spec.sha256 is None:
            state = "unpinned"
        else:
            try:
                spec.verify()
                state = "verified"
            except OfflineScorerError:
                state = "NOT verified (run `offline-scorer models verify " + name + "`)"
        click.echo(f"{name}{marker}")
        click.echo(f"  file:  {spec.display_file}")
        click.echo(f"  size:  {_size(spec)}")
        click.echo(f"  state: {state}")
    click.echo(f"user registry: {user_registry_path()}")


@models.command("verify")
@click.argument("name", required=False)
def models_verify(name: str | None) -> None:
    """Check that a model's file exists and matches its pinned sha256 (all models if no NAME)."""
    from offline_scorer.models.registry import load_registry

    registry = load_registry()
    names = [name] if name else sorted(registry.models)
    specs = [registry.resolve(n) for n in names]
    failed = None
    for spec in specs:
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
