"""The `offline-scorer` command: a thin click layer over the library.

User mistakes end as one line on stderr and a documented exit code, never a traceback.
"""

from __future__ import annotations

from typing import Any

import click

from offline_scorer.cli.calibrate import calibrate_command
from offline_scorer.cli.cassette import cassette
from offline_scorer.cli.eval import eval_command
from offline_scorer.cli.migrate import migrate
from offline_scorer.cli.models import grammars, models
from offline_scorer.cli.report import report
from offline_scorer.cli.reproduce import reproduce_command
from offline_scorer.cli.score import score
from offline_scorer.cli.serve import serve_command
from offline_scorer.errors import OfflineScorerError
from offline_scorer.scorers import registry
from offline_scorer.version import __version__


class _ToolError(click.ClickException):
    def __init__(self, error: OfflineScorerError) -> None:
        super().__init__(str(error))
        # click 8.5 types exit_code as a class variable; each error has its own exit code
        self.exit_code = error.exit_code  # type: ignore[misc, unused-ignore]

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        for problem in registry.load_problems():
            click.echo(f"warning: {problem}", err=True)
        try:
            return super().invoke(ctx)
        except OfflineScorerError as error:
            raise _ToolError(error) from None


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="offline-scorer")
def cli() -> None:
    """Judge summaries with local GGUF models; every score reproducible to the byte."""


for _command in (
    score,
    eval_command,
    report,
    reproduce_command,
    models,
    grammars,
    cassette,
    migrate,
    calibrate_command,
    serve_command,
):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="offline-scorer")
