"""`offline-scorer score`: one output (a summary) against its input (a source), printed for a
person or as the scorer kind's result JSON."""

from __future__ import annotations

from typing import Any

import click

from offline_scorer.cli.common import read_text, report_cassette, show_quality
from offline_scorer.cli.options import ScorerChoice, judge_options, run_spec, scorer_options
from offline_scorer.errors import InputError


@click.command("score")
@click.option(
    "--source",
    "source_path",
    required=True,
    metavar="PATH",
    help="The source text (UTF-8), or - for stdin: the run's input.",
)
@click.option(
    "--summary",
    "summary_path",
    required=True,
    metavar="PATH",
    help="The summary to judge (UTF-8), or - for stdin: the run's output.",
)
@scorer_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@judge_options
def score(
    source_path: str,
    summary_path: str,
    scorer: ScorerChoice,
    as_json: bool,
    **judge: Any,
) -> None:
    """Score one summary against its source."""
    from offline_scorer.cli.spinner import with_spinner

    if source_path == "-" and summary_path == "-":
        raise InputError("only one of --source and --summary can read standard input ('-')")
    run = run_spec(scorer, judge)
    source = read_text(source_path, "--source")
    summary = read_text(summary_path, "--summary")
    opened, model = run.open_judge()
    with opened:
        probe = run.scorer_on(opened)
        shown = with_spinner(opened, model.name, len(probe.steps))
        try:
            result = run.scorer_on(shown).run({"input": source, "output": summary})
        finally:
            report_cassette(opened)
    click.echo(result.to_json() if as_json else run.spec.describe(result))
    show_quality(model, as_json)  # the kind's entry: open_judge resolves it
