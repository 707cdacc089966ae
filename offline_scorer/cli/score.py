"""`offline-scorer score`: one summary against its source, printed or as JSON."""

from __future__ import annotations

from typing import Any

import click

from offline_scorer.cli.common import read_text, report_cassette
from offline_scorer.cli.options import judge_options, judge_settings, scorer_options
from offline_scorer.errors import InputError
from offline_scorer.scorers.summarization.result import ScorerResult


def _print_result(result: ScorerResult) -> None:
    o = result.numbers
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


@click.command("score")
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
@scorer_options
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
    with judge:
        shown = with_spinner(judge, spec.name, len(SummarizationScorer.steps))
        try:
            result = SummarizationScorer(shown, options).score_texts(source, summary)
        finally:
            report_cassette(judge)
    if as_json:
        click.echo(result.to_json())
    else:
        _print_result(result)
