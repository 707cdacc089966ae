"""The HTML report: one self-contained page (inline CSS and SVG, no scripts) to mail or archive.

The page and its CSS live in template.html, filled with string.Template so the markup can be
read and edited as HTML (a literal $ there is written $$; $quality is empty or ends in a line
break, so a run without labels has no blank line); the tables are built here because their
rows vary with the run.
"""

from __future__ import annotations

import functools
import os
import string
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from offline_scorer.errors import InputError
from offline_scorer.files import atomic_write_text
from offline_scorer.report.aggregate import aggregate, lowest_indices, ok_items, read_results
from offline_scorer.report.axes import axes_in, limits
from offline_scorer.report.charts import axis_colours, esc, histogram_svg, scatter_svg, zone_rules
from offline_scorer.report.numbers import num
from offline_scorer.report.table import interval, quality_heading, quality_rows

# The failing verdicts of one item's "result", as (text, reason) pairs for one table column.
Verdicts = Callable[[Mapping[str, Any]], list[tuple[str, str]]]


# derived from the result model: what counts against a summarization result
def _unsupported_claims(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    verdicts = result["preprocessStepResult"]["alignment"]
    return [(v["claim"], v.get("reason", "")) for v in verdicts if not v["supported"]]


def _unanswered_questions(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    verdicts = result["analyzeStepResult"]["coverage"]
    return [(v["question"], v.get("reason", "")) for v in verdicts if not v["answered"]]


# The lowest-scores table's verdict columns (heading, what goes in it); another scorer passes
# its own to render_html.
SUMMARIZATION_VERDICTS: tuple[tuple[str, Verdicts], ...] = (
    ("unsupported claims", _unsupported_claims),
    ("unanswered questions", _unanswered_questions),
)


@functools.cache
def _page() -> string.Template:
    text = resources.files("offline_scorer.report").joinpath("template.html")
    return string.Template(text.read_text(encoding="utf-8"))


def _axis_tag(axis: str, colours: Mapping[str, str]) -> str:
    return f'<span class="axis-tag" style="background:{colours[axis]}">{esc(axis)}</span>'


def _summary_html(agg: Mapping[str, Any], axes: Sequence[str]) -> str:
    cards = [
        ("items", agg["count"]),
        ("ok", agg["ok"]),
        ("failed", agg["failed"]),
        ("mean score", agg["mean"]),
        ("median score", agg["median"]),
    ]
    out = ['<div class="cards">']
    out += [
        f'<div class="card"><div class="v">{esc(num(v))}</div><div class="k">{k}</div></div>'
        for k, v in cards
    ]
    out.append("</div>")
    out.append(
        '<table class="summary"><thead><tr><th></th><th class="num">mean</th>'
        '<th class="num">median</th><th class="num">min</th><th class="num">max</th>'
        "</tr></thead><tbody>"
    )
    rows = [
        ("score", agg["mean"], agg["median"], agg["min"], agg["max"]),
        *((axis, agg[f"{axis}_mean"], None, None, None) for axis in axes),
    ]
    for name, *values in rows:
        cells = "".join(f'<td class="num">{esc(num(v))}</td>' for v in values)
        out.append(f"<tr><th>{esc(name)}</th>{cells}</tr>")
    out.append("</tbody></table>")
    colours, choices = axis_colours(axes), limits(axes)
    out.append(
        '<table class="limited"><thead><tr><th>limited by</th>'
        + "".join(f'<th class="num">{_axis_tag(axis, colours)}</th>' for axis in choices)
        + "</tr></thead><tbody><tr><th>ok items</th>"
        + "".join(f'<td class="num">{agg["limited_by"][axis]}</td>' for axis in choices)
        + "</tr></tbody></table>"
    )
    return "\n".join(out)


def _verdict_list(entries: Sequence[tuple[str, str]]) -> str:
    if not entries:
        return '<span class="none">none</span>'
    items = "".join(
        f"<li>{esc(text)}" + (f' <span class="why">({esc(why)})</span>' if why else "") + "</li>"
        for text, why in entries
    )
    return f'<ul class="verdicts">{items}</ul>'


def _lowest_html(
    items: Sequence[Mapping[str, Any]],
    axes: Sequence[str],
    verdicts: Sequence[tuple[str, Verdicts]],
) -> str:
    indices = lowest_indices(items)
    if not indices:
        return '<p class="none">No scored items.</p>'
    colours = axis_colours(axes)
    out = [
        '<table class="lowest"><thead><tr><th class="num">#</th><th>id</th>'
        '<th class="num">score</th>'
        + "".join(f'<th class="num">{esc(axis)}</th>' for axis in axes)
        + "<th>limited by</th>"
        + "".join(f"<th>{esc(heading)}</th>" for heading, _ in verdicts)
        + "</tr></thead><tbody>"
    ]
    for rank, index in enumerate(indices, start=1):
        item = items[index]
        result = item["result"]
        if result is None:
            cells = ['<span class="none">no verdicts recorded</span>'] * len(verdicts)
        else:
            cells = [_verdict_list(failing(result)) for _, failing in verdicts]
        out.append(
            f'<tr><td class="num">{rank}</td><td class="id">{esc(item["id"])}</td>'
            f'<td class="num">{esc(num(item["score"]))}</td>'
            + "".join(f'<td class="num">{esc(num(item[axis]))}</td>' for axis in axes)
            + f"<td>{_axis_tag(item['limiting_axis'], colours)}</td>"
            + "".join(f"<td>{cell}</td>" for cell in cells)
            + "</tr>"
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def _quality_html(quality: Mapping[str, Any]) -> str:
    what, left = quality_heading(quality)
    level = num(quality["level"] * 100)
    out = [
        f'<p class="sub">Against the {esc(what)}; {esc(left)}.</p>',
        '<table class="quality"><thead><tr><th>figure</th><th class="num">value</th>'
        f'<th class="num">{level}% interval</th><th></th></tr></thead><tbody>',
    ]
    for name, figure, note in quality_rows(quality):
        out.append(
            f'<tr><th>{esc(name)}</th><td class="num">{esc(num(figure["value"]))}'
            f'</td><td class="num">{esc(interval(figure))}</td>'
            f'<td class="why">{esc(note)}</td></tr>'
        )
    out.append("</tbody></table>")
    if quality["kind"] == "binary":
        c = quality["confusion"]
        out.append(
            f'<table class="confusion"><thead><tr><th>{esc(quality["rule"])}</th>'
            '<th class="num">judged faithful</th><th class="num">judged not</th>'
            "</tr></thead><tbody>"
            f'<tr><th>labelled faithful</th><td class="num">{c["tp"]}</td>'
            f'<td class="num">{c["fn"]}</td></tr>'
            f'<tr><th>labelled not</th><td class="num">{c["fp"]}</td>'
            f'<td class="num">{c["tn"]}</td></tr></tbody></table>'
        )
    out.append(
        f'<p class="why">Intervals: percentile bootstrap over items, '
        f"{quality['resamples']} resamples, seed {quality['seed']}. ROC AUC 0.5 is "
        "chance; balanced accuracy is the mean of the rates on faithful and on "
        "unfaithful items.</p>"
    )
    return "\n".join(out)


def _failures_html(agg: Mapping[str, Any]) -> str:
    if not agg["failures"]:
        return '<p class="none">No failures.</p>'
    out = [
        '<table class="failures"><thead><tr><th>id</th><th class="num">line</th>'
        "<th>error</th><th>message</th></tr></thead><tbody>"
    ]
    for failure in agg["failures"]:
        error = failure["error"]
        out.append(
            f'<tr><td class="id">{esc(failure["id"])}</td>'
            f'<td class="num">{esc(num(failure["line"]))}</td>'
            f"<td>{esc(error['type'])}</td><td>{esc(error['message'])}</td></tr>"
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def _charts_html(ok: Sequence[Mapping[str, Any]], axes: Sequence[str]) -> str:
    if not ok:
        return '<p class="none">No scored items to chart.</p>'
    figures = [
        f"<figure>{histogram_svg(ok)}<figcaption>Scores of the {len(ok)} ok items in ten "
        "equal bins (each bin includes its lower edge; the last also its upper edge)."
        "</figcaption></figure>"
    ]
    if len(axes) == 2:  # one axis against the other needs exactly two
        up, across = (esc(axis) for axis in axes)
        figures.append(
            f"<figure>{scatter_svg(ok, axes)}<figcaption>Each point is one item; the score is "
            "the lower of its two axes, so points above the dashed diagonal are limited by "
            f"{across} and points below it by {up}. Items at exactly the same spot share "
            "one larger point labelled with their number; hover a point for ids and scores."
            "</figcaption></figure>"
        )
    return f'<div class="charts">{"".join(figures)}</div>'


def render_html(
    items: Sequence[Mapping[str, Any]],
    agg: Mapping[str, Any],
    title: str,
    axes: Sequence[str] | None = None,
    verdicts: Sequence[tuple[str, Verdicts]] = SUMMARIZATION_VERDICTS,
) -> str:
    """The page for a run; `axes` defaults to those `agg` was made with."""
    from offline_scorer import __version__

    axes = axes_in(agg) if axes is None else tuple(axes)
    quality = agg.get("quality")
    return _page().substitute(
        title=esc(title),
        zone_rules=zone_rules(axes),
        count=agg["count"],
        ok=agg["ok"],
        failed=agg["failed"],
        summary=_summary_html(agg, axes),
        quality=f"<h2>Judge quality</h2>\n{_quality_html(quality)}\n" if quality else "",
        charts=_charts_html(ok_items(items), axes),
        lowest_count=len(agg["lowest"]),
        lowest=_lowest_html(items, axes, verdicts),
        failure_count=len(agg["failures"]),
        failures=_failures_html(agg),
        version=esc(__version__),
    )


def write_report(
    results_path: str | os.PathLike[str],
    html_path: str | os.PathLike[str],
    label: str | None = None,
) -> dict[str, Any]:
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
