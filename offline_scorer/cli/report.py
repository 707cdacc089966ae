"""`offline-scorer report`: the numbers of an evaluation run, and an HTML page to share.

The table (or JSON) goes to stdout so it can be piped; the 'wrote' note goes to stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from offline_scorer.errors import InputError
from offline_scorer.report import aggregate, format_table, read_results, render_html, write_html
from offline_scorer.report.lines import kind_of
from offline_scorer.report.provenance import provenance
from offline_scorer.scorers.registry import get_spec


@click.command("report")
@click.argument("results", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the HTML report [default: RESULTS with .html].",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the aggregate as JSON instead of the table."
)
@click.option("--no-html", is_flag=True, help="Do not write the HTML report.")
@click.option(
    "--label",
    "label",
    default=None,
    metavar="FIELD",
    help="Metadata field holding the human label [default: the first of faithful, "
    "label, human_score that the rows have].",
)
@click.option(
    "--cassette",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The cassette the run recorded: its content digest, judge and runtime versions join "
    "the report, with the commands that check them.",
)
@click.option(
    "--data",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The dataset the run scored, named in the report's `reproduce` command.",
)
@click.option(
    "--scorer",
    "kind",
    default=None,
    metavar="KIND",
    help="Report only the lines of this scorer kind (a file mixing kinds needs it).",
)
def report(
    results: Path,
    html_path: Path | None,
    as_json: bool,
    no_html: bool,
    label: str | None,
    cassette: Path | None,
    data: Path | None,
    kind: str | None,
) -> None:
    """Aggregate a results file (JSON Lines from a batch run) and write an HTML report.

    When the data rows carried a label (true/false or 0/1 for faithful, or a number), judge-
    quality figures are added: ROC AUC, balanced accuracy or Spearman, with bootstrap
    intervals. The report names the results file by its sha256 and, with --cassette, the
    cassette by its content digest, with the commands a reader runs to check both.
    """
    if no_html and html_path is not None:
        raise InputError("--html and --no-html contradict each other; give one of them")
    if html_path is None and not no_html:
        html_path = results.with_suffix(".html")
        if html_path == results:
            raise InputError(
                f"the default HTML path would overwrite {results}; choose one with --html"
            )
    if kind is not None:
        get_spec(kind)  # an unknown kind is one line
    items = read_results(results, kind=kind)
    try:
        agg = aggregate(items, label)
    except InputError as error:
        raise InputError(
            f"{results}: {error}" if label is None else f"--label {label}: {error}"
        ) from None
    origin = provenance(results, kind or kind_of(items).kind, cassette, data)
    if html_path is not None:
        title = f"Evaluation report: {results.name}"
        write_html(render_html(items, agg, title, provenance=origin), html_path, results)
    if as_json:
        document = {**agg.to_dict(), "provenance": origin.to_dict()}
        text = json.dumps(document, indent=2, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in an id cannot be printed as UTF-8
            text = json.dumps(document, indent=2)
        click.echo(text)
    else:
        click.echo(format_table(agg), nl=False)
        for line in origin.quality_lines():
            click.echo(line)
    for line in origin.lines():
        click.echo(line, err=True)
    if html_path is not None:
        click.echo(f"wrote {html_path}", err=True)
