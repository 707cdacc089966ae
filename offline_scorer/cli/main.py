"""The `offline-scorer` command: a thin click layer over the library.

User mistakes end as one line on stderr and a documented exit code, never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from offline_scorer import __version__
from offline_scorer.cli.options import judge_options, judge_settings
from offline_scorer.errors import InputError, OfflineScorerError
from offline_scorer.scorers.summarization.result import ScorerResult


class _ToolError(click.ClickException):
    def __init__(self, error: OfflineScorerError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OfflineScorerError as error:
            raise _ToolError(error) from None


def read_text(value: str, option: str) -> str:
    """A UTF-8 text file, or stdin for '-'; a leading BOM and the final line break are dropped."""
    if value == "-":
        data = click.get_binary_stream("stdin").read()
        name = "standard input"
    else:
        path = Path(value)
        name = str(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise InputError(f"{option}: no such file: {path}") from None
        except IsADirectoryError:
            raise InputError(f"{option}: {path} is a directory, not a text file") from None
        except OSError as error:
            raise InputError(f"{option}: cannot read {path}: {error.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{option}: {name} is not valid UTF-8 (byte 0x{data[error.start]:02x} at offset "
            f"{error.start}); convert it to UTF-8 first"
        ) from None
    # A text file's final line break belongs to the file, not to the text being judged.
    return text.removesuffix("\n").removesuffix("\r")


def _print_result(result: ScorerResult) -> None:
    o = result.outcome
    click.echo(f"score      {o.score!r}  (scale {o.scale!r})")
    click.echo(
        f"alignment  {o.alignment!r}  ({o.supported_claims} of {o.total_claims} claims supported)"
    )
    click.echo(
        f"coverage   {o.coverage!r}  ({o.answered_questions} of {o.asked_questions} "
        "questions answered)"
    )
    click.echo(f"limiting   {o.limiting_axis}")
    found = result.verdict_probabilities
    if found is not None:
        weakest = found.min_supported
        click.echo(
            f"P(true)    weakest claim {'n/a' if weakest is None else weakest}, verdicts "
            f"true at or above {found.threshold}"
        )
    click.echo("")
    click.echo(f"reason: {result.reason}")
    click.echo("")
    click.echo("unsupported claims:")
    for claim in o.unsupported_claims:
        click.echo(f'  - "{claim.claim}" ({claim.reason})')
    if not o.unsupported_claims:
        click.echo("  (none)")
    click.echo("unanswered questions:")
    for verdict in o.missing_questions:
        click.echo(f'  - "{verdict.question}" ({verdict.reason})')
    if not o.missing_questions:
        click.echo("  (none)")


def _report_cassette(judge: Any) -> None:
    """Tell the user where exchanges went: a recording is only useful if you can find it."""
    from offline_scorer.cassette.judge import CassetteJudge

    if not isinstance(judge, CassetteJudge):
        return
    if judge.recorded:
        click.echo(
            f"recorded {judge.recorded} exchange(s) to {judge.path} "
            f"(replay: --record-mode replay --cassette {judge.path})",
            err=True,
        )
    if judge.hits:
        click.echo(f"replayed {judge.hits} exchange(s) from {judge.path}", err=True)
    judge.close()


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="offline-scorer")
def cli() -> None:
    """Judge summaries with local GGUF models; every score reproducible to the byte."""


@cli.command()
@click.option(
    "--source",
    "source_path",
    required=True,
    metavar="PATH",
    help="The source text (UTF-8), or - for stdin.",
)
@click.option(
    "--summary",
    "summary_path",
    required=True,
    metavar="PATH",
    help="The summary to judge (UTF-8), or - for stdin.",
)
@click.option(
    "--max-questions",
    type=int,
    default=10,
    show_default=True,
    help="Upper bound on coverage questions.",
)
@click.option(
    "--scale", type=float, default=1.0, show_default=True, help="The score is multiplied by this."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@judge_options
def score(
    source_path: str,
    summary_path: str,
    max_questions: int,
    scale: float,
    as_json: bool,
    **judge_options_: Any,
) -> None:
    """Score one summary against its source."""
    from offline_scorer.judging.progress import with_spinner
    from offline_scorer.scorers.summarization.options import ScorerOptions
    from offline_scorer.scorers.summarization.scorer import SummarizationScorer

    if source_path == "-" and summary_path == "-":
        raise InputError("only one of --source and --summary can read standard input ('-')")
    options = ScorerOptions(max_questions=max_questions, scale=scale)
    source = read_text(source_path, "--source")
    summary = read_text(summary_path, "--summary")
    from offline_scorer.judging.open import open_judge

    judge, spec = open_judge(judge_settings(**judge_options_))
    scorer = SummarizationScorer(with_spinner(judge, spec.name), options)
    try:
        result = scorer.score_texts(source, summary)
    finally:
        _report_cassette(judge)
    if as_json:
        click.echo(result.to_json())
    else:
        _print_result(result)


@cli.group()
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
    from offline_scorer.models.registry import load_registry, user_registry_path

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


@cli.group()
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
    from offline_scorer.backends.llama_cpp.grammar_files import stale_files, write_files

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


def _register_subgroups() -> None:
    from offline_scorer.cli.calibrate import calibrate_command
    from offline_scorer.cli.cassette import cassette
    from offline_scorer.cli.eval import eval_command
    from offline_scorer.cli.report import report

    cli.add_command(calibrate_command)
    cli.add_command(cassette)
    cli.add_command(eval_command)
    cli.add_command(report)


_register_subgroups()


def main() -> None:
    cli(prog_name="offline-scorer")


if __name__ == "__main__":  # pragma: no cover
    main()
