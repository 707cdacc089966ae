"""The HTML report: one self-contained page (inline CSS and SVG, no scripts) to mail or archive.

The page is Jinja2 templates (templates/) with autoescape on, so every value from a results file
(ids, claims, reasons, axis names, messages) is escaped where it is written, and none is escaped
by hand. Before escaping, each value is made printable: control characters become U+FFFD and
lone surrogates "?", so a hostile or broken id still gives a valid UTF-8 page. This module picks
what the page shows; the templates say how it looks, and charts.py and quality_charts.py
compute the charts.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from offline_scorer.errors import InputError
from offline_scorer.files import atomic_write_text
from offline_scorer.report.aggregate import aggregate, lowest_indices, ok_items
from offline_scorer.report.axes import limits
from offline_scorer.report.charts import axis_colours, coordinate, css_name, histogram, scatter
from offline_scorer.report.lines import kind_of, read_results
from offline_scorer.report.model import Aggregate, BinaryQuality
from offline_scorer.report.numbers import num
from offline_scorer.report.provenance import Provenance
from offline_scorer.report.quality_charts import quality_charts
from offline_scorer.report.table import interval, quality_heading, quality_rows
from offline_scorer.scorers.spec import VerdictColumn

_CONTROL = {i: "\ufffd" for i in (*range(9), 11, 12, *range(14, 32), 127)}


def _printable(value: Any) -> Any:
    """Applied to every value a template writes, before autoescape (markup is left alone)."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return value.translate(_CONTROL).encode("utf-8", "replace").decode("utf-8")
    return value


@functools.cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("offline_scorer.report", "templates"),
        autoescape=True,
        finalize=_printable,
        undefined=jinja2.StrictUndefined,  # a misspelt name fails the render, never blanks
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters.update(num=num, coordinate=coordinate, css_name=css_name, interval=interval)
    return environment


@dataclass(frozen=True)
class _LowestRow:
    """One row of the lowest-scores table: the item, and per verdict column its entries
    (None when the line recorded no result, so there are no verdicts to list)."""

    item: Mapping[str, Any]
    cells: list[list[tuple[str, str]] | None]


def render_html(
    items: Sequence[Mapping[str, Any]],
    agg: Aggregate,
    title: str,
    axes: Sequence[str] | None = None,
    verdicts: Sequence[VerdictColumn] | None = None,
    provenance: Provenance | None = None,
) -> str:
    """The page for a run; `axes` defaults to those `agg` was made with, `verdicts` to the
    columns of failing verdicts the run's scorer kind declares. With `provenance`, a section
    names the results file's sha256, the cassette's content digest, the judge and the
    commands that check them."""
    from offline_scorer.version import __version__

    axes = agg.axes if axes is None else tuple(axes)
    if verdicts is None:
        verdicts = kind_of(items).verdict_columns
    ok = ok_items(items)
    lowest = []
    for index in lowest_indices(items):
        result = items[index]["result"]
        cells = [None if result is None else column.failing(result) for column in verdicts]
        lowest.append(_LowestRow(item=items[index], cells=cells))
    context: dict[str, Any] = {
        "title": title,
        "version": __version__,
        "agg": agg,
        "axes": axes,
        "choices": limits(axes),
        "colours": axis_colours(axes),
        "ok_count": len(ok),
        "histogram": histogram(ok) if ok else None,
        # one axis against the other needs exactly two
        "scatter": scatter(ok, axes) if ok and len(axes) == 2 else None,
        "lowest": lowest,
        "verdict_headings": [column.heading for column in verdicts],
        "provenance": None if provenance is None else provenance.to_dict(),
    }
    if agg.quality is not None:
        heading, left_out = quality_heading(agg.quality)
        context.update(
            quality=agg.quality,
            quality_rows=quality_rows(agg.quality),
            heading=heading,
            left_out=left_out,
            # what the weakest-P(true) AUC means, drawn: only a binary label has classes
            qcharts=quality_charts(items, agg.quality)
            if isinstance(agg.quality, BinaryQuality)
            else None,
        )
    return _environment().get_template("page.html").render(context)


def write_report(
    results_path: str | os.PathLike[str],
    html_path: str | os.PathLike[str],
    label: str | None = None,
) -> Aggregate:
    """Read, aggregate and write the HTML in one call; returns the aggregate for printing."""
    results_path, html_path = Path(results_path), Path(html_path)
    items = read_results(results_path)
    agg = aggregate(items, label)
    write_html(
        render_html(items, agg, f"Evaluation report: {results_path.name}"), html_path, results_path
    )
    return agg


def write_html(text: str, html_path: Path, results_path: Path | None = None) -> None:
    """Write atomically so a crash never leaves half a report next to a good results file."""
    if (
        results_path is not None
        and html_path.exists()
        and results_path.exists()
        and html_path.resolve() == results_path.resolve()
    ):
        raise InputError(
            f"the HTML report would overwrite the results file {results_path}; "
            "choose another path with --html"
        )
    directory = html_path.parent
    if not directory.is_dir():
        raise InputError(f"cannot write {html_path}: the directory {directory} does not exist")
    try:
        atomic_write_text(html_path, text)
    except OSError as error:
        raise InputError(f"cannot write {html_path}: {error.strerror or error}") from None
