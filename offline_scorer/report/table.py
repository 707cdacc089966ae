"""The aggregate as plain text for a terminal, and the judge-quality rows the page shares.

Plain text with no colours so it can be piped and diffed; ids and messages come from users, so
they are made printable first.
"""

from __future__ import annotations

from collections.abc import Sequence

from offline_scorer.report.axes import limits
from offline_scorer.report.model import (
    Aggregate,
    BinaryQuality,
    CountedFigure,
    Figure,
    NumericQuality,
    Quality,
)
from offline_scorer.report.numbers import num


def plain(text: str, width: int | None = None) -> str:
    """One terminal-safe line: ids and messages come from users and may hold control codes."""
    text = "".join(
        c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else "\ufffd" for c in text
    )
    text = text.encode("utf-8", "replace").decode("utf-8")
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return text


def format_table(agg: Aggregate, axes: Sequence[str] | None = None) -> str:
    """The aggregate as aligned plain text; `axes` defaults to those it was made with."""
    axes = agg.axes if axes is None else tuple(axes)
    names = [plain(axis) for axis in axes]  # keys from the results file, so made printable
    limited = agg.limited_by
    lines = [
        f"items        {agg.count} ({agg.ok} ok, {agg.failed} failed)",
        f"score        mean {num(agg.mean)}   median {num(agg.median)}   "
        f"min {num(agg.min)}   max {num(agg.max)}",
        *(f"{plain(axis):<12} mean {num(agg.axis_means[axis])}" for axis in axes),
        "limited by   " + "   ".join(f"{plain(axis)} {limited[axis]}" for axis in limits(axes)),
    ]
    if agg.quality is not None:
        lines += ["", *_quality_lines(agg.quality)]
    if agg.lowest:
        rows = [
            (
                str(n),
                plain(row.id, 40),
                num(row.score),
                *(num(row.axes[axis]) for axis in axes),
                plain(row.limiting_axis),
            )
            for n, row in enumerate(agg.lowest, start=1)
        ]
        header = ("#", "id", "score", *names, "limited by")
        widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
        lines += ["", "lowest scores"]
        for row in [header, *rows]:
            cells = [
                row[0].rjust(widths[0]),
                row[1].ljust(widths[1]),
                *(row[c].rjust(widths[c]) for c in range(2, len(row) - 1)),
                row[-1],
            ]
            lines.append("  " + "  ".join(cells))
    if agg.failures:
        failures = [
            (plain(f.id, 40), num(f.line), plain(f"{f.error.type}: {f.error.message}", 100))
            for f in agg.failures
        ]
        titles = ("id", "line", "error")
        widths = [max(len(r[c]) for r in [titles, *failures]) for c in range(2)]
        lines += ["", "failures"]
        for failure in [titles, *failures]:
            lines.append(
                f"  {failure[0].ljust(widths[0])}  {failure[1].rjust(widths[1])}  {failure[2]}"
            )
    return "\n".join(lines) + "\n"


def interval(figure: Figure | CountedFigure) -> str:
    if figure.low is None:
        return "-"
    return f"[{num(figure.low)}, {num(figure.high)}]"


def quality_rows(quality: Quality) -> list[tuple[str, Figure | CountedFigure, str]]:
    """(name, figure, note) for each judge-quality figure, in the order they are shown."""
    if isinstance(quality, NumericQuality):
        rows: list[tuple[str, Figure | CountedFigure, str]] = [
            ("Spearman rho, score", quality.spearman_score, ""),
            (f"Spearman rho, {quality.axis}", quality.spearman_axis, ""),
        ]
    else:
        rows = [
            (f"ROC AUC, {quality.axis}", quality.auc_axis, ""),
            ("ROC AUC, score", quality.auc_score, ""),
        ]
        minimum = quality.auc_weakest_p
        if minimum is not None:
            rows.append(
                (
                    f"ROC AUC, weakest {quality.axis} P(true)",
                    minimum,
                    f"{minimum.items} items with verdict probabilities",
                )
            )
        rows.append((f"balanced accuracy, {quality.rule}", quality.balanced_accuracy, ""))
    out = []
    for name, figure, note in rows:
        if figure.value is None:
            note = "needs both classes" if quality.kind == "binary" else "needs varied values"
        elif figure.resamples < quality.resamples:
            note = ", ".join(
                filter(
                    None,
                    [note, f"interval from {figure.resamples} of {quality.resamples} resamples"],
                )
            )
        out.append((name, figure, note))
    return out


def quality_heading(quality: Quality) -> tuple[str, str]:
    """What was measured against, and what was left out, as two sentences."""
    if isinstance(quality, BinaryQuality):
        what = (
            f"label {quality.label!r} (true = positive): {quality.items} items, "
            f"{quality.positives} true, {quality.negatives} false"
        )
    else:
        what = f"label {quality.label!r} (a number): {quality.items} items"
    left = quality.excluded
    return what, (
        f"left out: {left.failed} failed, {left.missing} without the label, "
        f"{left.invalid} with an unusable value"
    )


def _quality_lines(quality: Quality) -> list[str]:
    what, left = quality_heading(quality)
    level = num(quality.level * 100)
    rows = [
        (name, num(fig.value), interval(fig), note) for name, fig, note in quality_rows(quality)
    ]
    header = ("figure", "value", f"{level}% interval", "")
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(3)]
    lines = ["judge quality", f"  {plain(what)}", f"  {left}"]
    for row in [header, *rows]:
        lines.append(
            f"  {row[0].ljust(widths[0])}  {row[1].rjust(widths[1])}  "
            f"{row[2].ljust(widths[2])}  {row[3]}".rstrip()
        )
    if isinstance(quality, BinaryQuality):
        c = quality.confusion
        lines.append(
            f"  confusion, {quality.rule}: tp {c.tp}   fn {c.fn}   "
            f"fp {c.fp}   tn {c.tn}   (positive = judged/labelled true)"
        )
    lines.append(
        f"  intervals: percentile bootstrap over items, {quality.resamples} "
        f"resamples, seed {quality.seed}"
    )
    return lines
