"""Summaries of a batch evaluation run: aggregate numbers, a terminal table, one HTML file.

The results file is read strictly because a report built from a silently skipped line would
misstate the run. Every output is deterministic (same results file, same bytes) so reports can
be diffed and checked in.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Mapping, Sequence
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal, localcontext
from pathlib import Path
from typing import Any

from offline_scorer.errors import InputError
from offline_scorer.files import atomic_write_text
from offline_scorer.report.quality import judge_quality

Item = dict[str, Any]

LOWEST_COUNT = 5
AXES = ("alignment", "coverage", "both", "none")
# Every line has these; "metadata" (the data row's other fields) follows "error" in lines
# written since rows keep their extra fields, and is optional so older files still read.
_KEYS = (
    "id",
    "line",
    "digest",
    "status",
    "score",
    "alignment",
    "coverage",
    "limiting_axis",
    "result",
    "error",
)
_NUMBERS = ("score", "alignment", "coverage")
_FOUR_PLACES = Decimal("0.0001")
# Colorblind-safe (Okabe-Ito); one colour per limiting axis, used in the scatter and the tables.
_COLOURS = {"alignment": "#d55e00", "coverage": "#0072b2", "both": "#8e44ad", "none": "#6b6b6b"}
_AXIS_LABELS = {
    "alignment": "alignment limits",
    "coverage": "coverage limits",
    "both": "both equal, below top",
    "none": "both at top",
}


# --------------------------------------------------------------------------- reading


class _LineError(Exception):
    """What is wrong with one line; read_results adds the path and line number."""


def read_results(path: str | os.PathLike[str]) -> list[Item]:
    """Every line of a results file, validated, so later steps can trust the shape."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such results file: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a results file") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from None
    if not data:
        return []
    lines = data.split(b"\n")
    torn_possible = lines[-1] != b""
    if not torn_possible:
        lines.pop()
    items: list[Item] = []
    for number, raw in enumerate(lines, start=1):
        is_last = number == len(lines)
        try:
            items.append(_parse_line(raw, first=number == 1))
        except _LineError as error:
            if is_last and torn_possible and isinstance(error.__cause__, ValueError):
                raise InputError(
                    f"{path} line {number}: the last line is cut off (no line break at the end "
                    "and not valid JSON), so the run that wrote it was probably killed; finish "
                    "or re-run the evaluation, or delete that line to report on the rest"
                ) from None
            raise InputError(
                f"{path} line {number}: {error}; fix or remove that line (results files are "
                "written by the batch evaluator, one JSON object per line)"
            ) from None
    return items


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _parse_line(raw: bytes, first: bool) -> Item:
    if first and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _LineError(
            f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})"
        ) from error
    if not text.strip():
        raise _LineError("the line is empty")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise _LineError(f"not valid JSON ({error.msg} at column {error.colno})") from error
    except ValueError as error:
        raise _LineError(f"not valid JSON ({error})") from error
    if not isinstance(value, dict):
        raise _LineError(f"expected a JSON object, found {_json_type(value)}")
    _check_item(value)
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_item(item: dict[str, Any]) -> None:
    missing = [key for key in _KEYS if key not in item]
    if missing:
        raise _LineError("missing key " + ", ".join(repr(k) for k in missing))
    if not isinstance(item["id"], str):
        raise _LineError(f"'id' must be a string, found {_json_type(item['id'])}")
    line = item["line"]
    if line is not None and (not isinstance(line, int) or isinstance(line, bool)):
        raise _LineError(f"'line' must be an integer or null, found {_json_type(line)}")
    if not isinstance(item["digest"], str):
        raise _LineError(f"'digest' must be a string, found {_json_type(item['digest'])}")
    if "metadata" in item and not isinstance(item["metadata"], dict):
        raise _LineError(f"'metadata' must be an object, found {_json_type(item['metadata'])}")
    status = item["status"]
    if status == "ok":
        _check_ok(item)
    elif status == "error":
        _check_error(item)
    else:
        raise _LineError(f'\'status\' must be "ok" or "error", found {json.dumps(status)}')


def _check_ok(item: dict[str, Any]) -> None:
    for key in _NUMBERS:
        value = item[key]
        if not _is_number(value) or value < 0:
            raise _LineError(
                f"'{key}' of an ok item must be a number >= 0, found {json.dumps(value)}"
            )
    if item["limiting_axis"] not in AXES:
        raise _LineError(
            "'limiting_axis' of an ok item must be one of "
            f"{', '.join(AXES)}, found {json.dumps(item['limiting_axis'])}"
        )
    if item["error"] is not None:
        raise _LineError('an ok item must have "error": null')
    if item["result"] is not None:
        _check_result(item["result"])


def _check_result(result: Any) -> None:
    if not isinstance(result, dict):
        raise _LineError(f"'result' must be an object or null, found {_json_type(result)}")
    pre = result.get("preprocessStepResult")
    analyze = result.get("analyzeStepResult")
    if not isinstance(pre, dict) or not isinstance(pre.get("alignment"), list):
        raise _LineError("'result.preprocessStepResult.alignment' must be an array")
    if not isinstance(analyze, dict) or not isinstance(analyze.get("coverage"), list):
        raise _LineError("'result.analyzeStepResult.coverage' must be an array")
    for n, verdict in enumerate(pre["alignment"], start=1):
        if not (
            isinstance(verdict, dict)
            and isinstance(verdict.get("claim"), str)
            and isinstance(verdict.get("supported"), bool)
            and isinstance(verdict.get("reason", ""), str)
        ):
            raise _LineError(
                f"alignment verdict {n} in 'result' must have a string 'claim', "
                "a boolean 'supported' and a string 'reason'"
            )
    for n, verdict in enumerate(analyze["coverage"], start=1):
        if not (
            isinstance(verdict, dict)
            and isinstance(verdict.get("question"), str)
            and isinstance(verdict.get("answered"), bool)
            and isinstance(verdict.get("reason", ""), str)
        ):
            raise _LineError(
                f"coverage verdict {n} in 'result' must have a string 'question', "
                "a boolean 'answered' and a string 'reason'"
            )
    if result.get("verdictProbabilities") is not None:
        _check_probabilities(
            result["verdictProbabilities"], len(pre["alignment"]), len(analyze["coverage"])
        )


def _is_probability(value: Any) -> bool:
    return _is_number(value) and 0 <= value <= 1


def _check_probabilities(probabilities: Any, claims: int, questions: int) -> None:
    """`verdictProbabilities`: absent or null (no probabilities), or the threshold and one
    P(true) (or null) per alignment and per coverage verdict."""
    where = "'result.verdictProbabilities'"
    if not isinstance(probabilities, dict):
        raise _LineError(f"{where} must be an object or null, found {_json_type(probabilities)}")
    threshold = probabilities.get("threshold", ...)
    if threshold is ... or not (threshold is None or _is_probability(threshold)):
        raise _LineError(f"{where} must have a 'threshold' that is a number from 0 to 1 or null")
    for key, count, noun in (
        ("alignment", claims, "alignment verdict"),
        ("coverage", questions, "coverage verdict"),
    ):
        values = probabilities.get(key)
        if not isinstance(values, list) or not all(v is None or _is_probability(v) for v in values):
            raise _LineError(f"{where}.{key} must be an array of numbers from 0 to 1 or null")
        if len(values) != count:
            raise _LineError(f"{where}.{key} has {len(values)} entries for {count} {noun}s")


def _check_error(item: dict[str, Any]) -> None:
    for key in (*_NUMBERS, "limiting_axis", "result"):
        if item[key] is not None:
            raise _LineError(f'an error item must have "{key}": null')
    error = item["error"]
    if not (
        isinstance(error, dict)
        and isinstance(error.get("type"), str)
        and isinstance(error.get("message"), str)
    ):
        raise _LineError(
            "'error' of an error item must be an object with string 'type' and 'message'"
        )


# --------------------------------------------------------------------------- aggregating


def _dec(value: float | int) -> Decimal:
    # repr() is the shortest round-tripping form, so 0.1 stays 0.1 instead of its binary tail.
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _round4(value: Decimal) -> float:
    return float(value.quantize(_FOUR_PLACES, rounding=ROUND_HALF_UP))


def _mean(values: Sequence[float | int]) -> float | None:
    if not values:
        return None
    with localcontext(Context(prec=60)):
        return _round4(sum((_dec(v) for v in values), Decimal(0)) / len(values))


def _median(values: Sequence[float | int]) -> float | None:
    if not values:
        return None
    ordered = sorted(_dec(v) for v in values)
    mid = len(ordered) // 2
    with localcontext(Context(prec=60)):
        middle = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
        return _round4(middle)


def _ok_items(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [item for item in items if item["status"] == "ok"]


def lowest_indices(items: Sequence[Mapping[str, Any]], count: int = LOWEST_COUNT) -> list[int]:
    """Positions of the lowest-scoring ok items; ties go to the earlier item for stable output."""
    ranked = sorted(
        (_dec(item["score"]), index) for index, item in enumerate(items) if item["status"] == "ok"
    )
    return [index for _, index in ranked[:count]]


def aggregate(items: Sequence[Mapping[str, Any]], label: str | None = None) -> dict[str, Any]:
    """Run-level numbers over the ok items; failures are counted and listed, never averaged.

    "quality" holds judge-quality figures against the label in the items' metadata (the field
    `label`, else the first of faithful, label, human_score found), or None without labels.
    """
    ok = _ok_items(items)
    scores = [item["score"] for item in ok]
    limited_by = dict.fromkeys(AXES, 0)
    for item in ok:
        limited_by[item["limiting_axis"]] += 1
    return {
        "count": len(items),
        "ok": len(ok),
        "failed": len(items) - len(ok),
        "mean": _mean(scores),
        "median": _median(scores),
        "min": min(scores, key=_dec) if scores else None,
        "max": max(scores, key=_dec) if scores else None,
        "alignment_mean": _mean([item["alignment"] for item in ok]),
        "coverage_mean": _mean([item["coverage"] for item in ok]),
        "limited_by": limited_by,
        "lowest": [
            {
                key: items[i][key]
                for key in ("id", "score", "alignment", "coverage", "limiting_axis")
            }
            for i in lowest_indices(items)
        ],
        "failures": [
            {"id": item["id"], "line": item["line"], "error": item["error"]}
            for item in items
            if item["status"] == "error"
        ],
        "quality": judge_quality(items, label),
    }


# --------------------------------------------------------------------------- terminal table


def _num(value: float | int | None) -> str:
    """Shortest exact form: 0.5 not 0.5000, 1 not 1.0, so columns stay narrow."""
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return format(_dec(value).normalize(), "f")


def _plain(text: str, width: int | None = None) -> str:
    """One terminal-safe line: ids and messages come from users and may hold control codes."""
    text = "".join(
        c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else "\ufffd" for c in text
    )
    text = text.encode("utf-8", "replace").decode("utf-8")
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return text


def format_table(agg: Mapping[str, Any]) -> str:
    """The aggregate as aligned plain text for a terminal (no colours, safe to pipe)."""
    limited = agg["limited_by"]
    lines = [
        f"items        {agg['count']} ({agg['ok']} ok, {agg['failed']} failed)",
        f"score        mean {_num(agg['mean'])}   median {_num(agg['median'])}   "
        f"min {_num(agg['min'])}   max {_num(agg['max'])}",
        f"alignment    mean {_num(agg['alignment_mean'])}",
        f"coverage     mean {_num(agg['coverage_mean'])}",
        "limited by   " + "   ".join(f"{axis} {limited[axis]}" for axis in AXES),
    ]
    if agg.get("quality"):
        lines += ["", *_quality_lines(agg["quality"])]
    if agg["lowest"]:
        rows = [
            (
                str(n),
                _plain(row["id"], 40),
                _num(row["score"]),
                _num(row["alignment"]),
                _num(row["coverage"]),
                row["limiting_axis"],
            )
            for n, row in enumerate(agg["lowest"], start=1)
        ]
        header = ("#", "id", "score", "alignment", "coverage", "limited by")
        widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
        lines += ["", "lowest scores"]
        for row in [header, *rows]:
            cells = [
                row[0].rjust(widths[0]),
                row[1].ljust(widths[1]),
                *(row[c].rjust(widths[c]) for c in (2, 3, 4)),
                row[5],
            ]
            lines.append("  " + "  ".join(cells))
    if agg["failures"]:
        failures = [
            (
                _plain(f["id"], 40),
                _num(f["line"]),
                _plain(f"{f['error']['type']}: {f['error']['message']}", 100),
            )
            for f in agg["failures"]
        ]
        titles = ("id", "line", "error")
        widths = [max(len(r[c]) for r in [titles, *failures]) for c in range(2)]
        lines += ["", "failures"]
        for failure in [titles, *failures]:
            lines.append(
                f"  {failure[0].ljust(widths[0])}  {failure[1].rjust(widths[1])}  {failure[2]}"
            )
    return "\n".join(lines) + "\n"


def _interval(figure: Mapping[str, Any]) -> str:
    if figure["low"] is None:
        return "-"
    return f"[{_num(figure['low'])}, {_num(figure['high'])}]"


def _quality_rows(quality: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], str]]:
    """(name, figure, note) for each judge-quality figure, in the order they are shown."""
    if quality["kind"] == "numeric":
        return [
            ("Spearman rho, score", quality["spearman_score"], ""),
            ("Spearman rho, alignment", quality["spearman_alignment"], ""),
        ]
    rows = [
        ("ROC AUC, alignment", quality["auc_alignment"], ""),
        ("ROC AUC, score", quality["auc_score"], ""),
    ]
    minimum = quality["auc_min_p_supported"]
    if minimum is not None:
        rows.append(
            (
                "ROC AUC, min P(supported)",
                minimum,
                f"{minimum['items']} items with verdict probabilities",
            )
        )
    rows.append((f"balanced accuracy, {quality['rule']}", quality["balanced_accuracy"], ""))
    out = []
    for name, figure, note in rows:
        if figure["value"] is None:
            note = "needs both classes" if quality["kind"] == "binary" else "needs varied values"
        elif figure["resamples"] < quality["resamples"]:
            note = ", ".join(
                filter(
                    None,
                    [
                        note,
                        f"interval from {figure['resamples']} of {quality['resamples']} resamples",
                    ],
                )
            )
        out.append((name, figure, note))
    return out


def _quality_heading(quality: Mapping[str, Any]) -> tuple[str, str]:
    """What was measured against, and what was left out, as two sentences."""
    if quality["kind"] == "binary":
        what = (
            f"label {quality['label']!r} (true = faithful): {quality['items']} items, "
            f"{quality['positives']} true, {quality['negatives']} false"
        )
    else:
        what = f"label {quality['label']!r} (a number): {quality['items']} items"
    left = quality["excluded"]
    return what, (
        f"left out: {left['failed']} failed, {left['missing']} without the label, "
        f"{left['invalid']} with an unusable value"
    )


def _quality_lines(quality: Mapping[str, Any]) -> list[str]:
    what, left = _quality_heading(quality)
    level = _num(quality["level"] * 100)
    rows = [
        (name, _num(fig["value"]), _interval(fig), note)
        for name, fig, note in _quality_rows(quality)
    ]
    header = ("figure", "value", f"{level}% interval", "")
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(3)]
    lines = ["judge quality", f"  {_plain(what)}", f"  {left}"]
    for row in [header, *rows]:
        lines.append(
            f"  {row[0].ljust(widths[0])}  {row[1].rjust(widths[1])}  "
            f"{row[2].ljust(widths[2])}  {row[3]}".rstrip()
        )
    if quality["kind"] == "binary":
        c = quality["confusion"]
        lines.append(
            f"  confusion, {quality['rule']}: tp {c['tp']}   fn {c['fn']}   "
            f"fp {c['fp']}   tn {c['tn']}   (positive = judged/labelled faithful)"
        )
    lines.append(
        f"  intervals: percentile bootstrap over items, {quality['resamples']} "
        f"resamples, seed {quality['seed']}"
    )
    return lines


# --------------------------------------------------------------------------- HTML

_CONTROL = {i: "\ufffd" for i in (*range(9), 11, 12, *range(14, 32), 127)}


def _esc(text: object) -> str:
    """Escaped for element text and attributes; lone surrogates cannot be written as UTF-8."""
    cleaned = str(text).translate(_CONTROL).encode("utf-8", "replace").decode("utf-8")
    return html.escape(cleaned, quote=True)


def _f(value: float) -> str:
    """SVG coordinates with a fixed precision, so output bytes do not depend on float noise."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _nice_top(largest: Decimal) -> Decimal:
    """1 for the usual 0..1 scale; else the next 1/2/2.5/5 x 10^k so ticks are round numbers."""
    if largest <= 1:
        return Decimal(1)
    exponent = largest.adjusted()
    for base in (Decimal(1), Decimal(2), Decimal("2.5"), Decimal(5), Decimal(10)):
        top = base.scaleb(exponent)
        if top >= largest:
            return top
    return Decimal(10).scaleb(exponent)  # pragma: no cover - 10 x 10^k always suffices


def _scale_top(ok: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> Decimal:
    values = [_dec(item[key]) for item in ok for key in keys]
    return _nice_top(max(values, default=Decimal(0)))


def _tick_label(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text


def _count_step(largest: int) -> int:
    """The smallest 1/2/5 x 10^k integer tick step giving at most six ticks above zero."""
    magnitude = 1
    while True:
        for base in (1, 2, 5):
            if largest <= 6 * base * magnitude:
                return base * magnitude
        magnitude *= 10


def _histogram_svg(ok: Sequence[Mapping[str, Any]]) -> str:
    top = _scale_top(ok, ("score",))
    counts = [0] * 10
    for item in ok:
        with localcontext(Context(prec=60)):
            index = int((_dec(item["score"]) * 10 / top).to_integral_value(rounding=ROUND_FLOOR))
        counts[min(max(index, 0), 9)] += 1
    width, height = 520, 320
    left, right, upper, bottom = 56, 22, 24, 58
    plot_w, plot_h = width - left - right, height - upper - bottom
    step = _count_step(max(max(counts), 1))
    y_top = max(step * math.ceil(max(max(counts), 1) / step), 1)
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="hist-title">',
        '<title id="hist-title">Histogram of scores, 10 bins</title>',
    ]
    for tick in range(0, y_top + 1, step):
        y = upper + plot_h - plot_h * tick / y_top
        out.append(
            f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{_f(y)}" y2="{_f(y)}"/>'
        )
        out.append(
            f'<text class="tick" x="{left - 6}" y="{_f(y + 4)}" text-anchor="end">{tick}</text>'
        )
    bin_w = plot_w / 10
    for index, count in enumerate(counts):
        low, high = top * index / 10, top * (index + 1) / 10
        closing = "]" if index == 9 else ")"
        x = left + bin_w * index
        bar_h = plot_h * count / y_top
        noun = "item" if count == 1 else "items"
        out.append(
            f"<g><title>score in [{_tick_label(low)}, {_tick_label(high)}{closing}: "
            f"{count} {noun}</title>"
        )
        out.append(
            f'<rect class="bar" x="{_f(x + 2)}" y="{_f(upper + plot_h - bar_h)}" '
            f'width="{_f(bin_w - 4)}" height="{_f(bar_h)}"/>'
        )
        if count:
            out.append(
                f'<text class="count" x="{_f(x + bin_w / 2)}" '
                f'y="{_f(upper + plot_h - bar_h - 5)}" text-anchor="middle">{count}'
                "</text>"
            )
        out.append("</g>")
    for index in range(11):
        x = left + bin_w * index
        out.append(
            f'<line class="axis" x1="{_f(x)}" x2="{_f(x)}" y1="{upper + plot_h}" '
            f'y2="{upper + plot_h + 5}"/>'
        )
        out.append(
            f'<text class="tick" x="{_f(x)}" y="{upper + plot_h + 19}" '
            f'text-anchor="middle">{_tick_label(top * index / 10)}</text>'
        )
    out += [
        f'<line class="axis" x1="{left}" x2="{left + plot_w}" y1="{upper + plot_h}" '
        f'y2="{upper + plot_h}"/>',
        f'<line class="axis" x1="{left}" x2="{left}" y1="{upper}" y2="{upper + plot_h}"/>',
        f'<text class="label" x="{_f(left + plot_w / 2)}" y="{height - 14}" '
        'text-anchor="middle">score</text>',
        f'<text class="label" transform="translate(16 {_f(upper + plot_h / 2)}) rotate(-90)" '
        'text-anchor="middle">items</text>',
        "</svg>",
    ]
    return "\n".join(out)


def _scatter_svg(ok: Sequence[Mapping[str, Any]]) -> str:
    top = _scale_top(ok, ("alignment", "coverage"))
    size = 360
    left, upper = 60, 20
    width, height = left + size + 24, upper + size + 96
    top_f = float(top)

    def px(value: float | Decimal) -> float:
        return left + size * float(value) / top_f

    def py(value: float | Decimal) -> float:
        return upper + size - size * float(value) / top_f

    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="scatter-title">',
        '<title id="scatter-title">Alignment against coverage, one point per item</title>',
        # Above the diagonal alignment exceeds coverage, so coverage limits the score.
        f'<polygon class="zone-coverage" points="{left},{upper + size} {left},{upper} '
        f'{left + size},{upper}"/>',
        f'<polygon class="zone-alignment" points="{left},{upper + size} '
        f'{left + size},{upper + size} {left + size},{upper}"/>',
        f'<text class="zone" x="{left + 8}" y="{upper + 16}">coverage limits</text>',
        f'<text class="zone" x="{left + size - 8}" y="{upper + size - 8}" '
        'text-anchor="end">alignment limits</text>',
    ]
    for index in range(6):
        value = top * index / 5
        x, y = px(value), py(value)
        out += [
            f'<line class="grid" x1="{_f(x)}" x2="{_f(x)}" y1="{upper}" y2="{upper + size}"/>',
            f'<line class="grid" x1="{left}" x2="{left + size}" y1="{_f(y)}" y2="{_f(y)}"/>',
            f'<text class="tick" x="{_f(x)}" y="{upper + size + 19}" '
            f'text-anchor="middle">{_tick_label(value)}</text>',
            f'<text class="tick" x="{left - 7}" y="{_f(y + 4)}" '
            f'text-anchor="end">{_tick_label(value)}</text>',
        ]
    out += [
        f'<line class="diagonal" x1="{left}" y1="{upper + size}" x2="{left + size}" '
        f'y2="{upper}"><title>alignment = coverage</title></line>',
        f'<rect class="frame" x="{left}" y="{upper}" width="{size}" height="{size}"/>',
        f'<text class="label" x="{left + size // 2}" y="{upper + size + 40}" '
        'text-anchor="middle">coverage</text>',
        f'<text class="label" transform="translate(18 {upper + size // 2}) rotate(-90)" '
        'text-anchor="middle">alignment</text>',
    ]
    groups: dict[tuple[Decimal, Decimal, str], list[Mapping[str, Any]]] = {}
    for item in ok:
        key = (_dec(item["coverage"]), _dec(item["alignment"]), item["limiting_axis"])
        groups.setdefault(key, []).append(item)
    # Big (crowded) points first so single points drawn later stay visible on top of them.
    ordered = sorted(
        groups.items(), key=lambda kv: (-len(kv[1]), kv[0][0], kv[0][1], AXES.index(kv[0][2]))
    )
    for (cov, ali, axis), members in ordered:
        n = len(members)
        radius = min(5 + 3 * math.sqrt(n - 1), 16)
        names = [f"{m['id']} (score {_num(m['score'])})" for m in members[:15]]
        if n > 15:
            names.append(f"… and {n - 15} more")
        head = (f"{n} items" if n > 1 else "1 item") + (
            f" at coverage {_num(float(cov))}, alignment {_num(float(ali))}, {_AXIS_LABELS[axis]}"
        )
        x, y = px(float(cov)), py(float(ali))
        out.append(
            f'<g class="point"><title>{_esc(head)}&#10;{"&#10;".join(map(_esc, names))}</title>'
        )
        out.append(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(radius)}" fill="{_COLOURS[axis]}"/>')
        if n > 1:
            out.append(
                f'<text class="n" x="{_f(x)}" y="{_f(y + 3.5)}" text-anchor="middle">{n}</text>'
            )
        out.append("</g>")
    counts = {axis: sum(1 for item in ok if item["limiting_axis"] == axis) for axis in AXES}
    legend_y = upper + size + 62
    for index, axis in enumerate(AXES):
        column, row = index % 2, index // 2
        x = left + column * 190
        y = legend_y + row * 20
        out.append(f'<circle cx="{x + 6}" cy="{y - 4}" r="5" fill="{_COLOURS[axis]}"/>')
        out.append(
            f'<text class="legend" x="{x + 16}" y="{y}">{_esc(_AXIS_LABELS[axis])} '
            f"({counts[axis]})</text>"
        )
    out.append("</svg>")
    return "\n".join(out)


_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: #1d1d1f; background: #fff; margin: 0 auto; max-width: 1120px; padding: 24px 28px;
  line-height: 1.4; font-size: 15px; }
h1 { font-size: 1.6em; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 1.2em; margin: 28px 0 10px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.sub { color: #555; margin: 0 0 16px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 12px 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card .v { font-size: 1.5em; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .k { color: #555; font-size: 0.85em; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { border: 1px solid #ddd; padding: 5px 9px; text-align: left; vertical-align: top; }
th { background: #f4f4f6; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.lowest { width: 100%; }
td.id { overflow-wrap: anywhere; min-width: 10em; max-width: 18em;
  font-family: ui-monospace, monospace;
  font-size: 0.9em; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
figure { margin: 0; }
figcaption { color: #555; font-size: 0.9em; max-width: 460px; }
svg.chart { font-family: inherit; font-size: 12px; display: block; }
svg .grid { stroke: #e6e6e6; stroke-width: 1; }
svg .axis { stroke: #333; stroke-width: 1; }
svg .frame { fill: none; stroke: #333; stroke-width: 1; }
svg .bar { fill: #4a7fb5; }
svg .tick { fill: #444; font-size: 11px; }
svg .label { fill: #222; font-size: 13px; font-weight: 600; }
svg .count { fill: #222; font-size: 11px; }
svg .zone { fill: #666; font-size: 11px; font-style: italic; paint-order: stroke;
  stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
svg .zone-coverage { fill: #0072b2; fill-opacity: 0.05; }
svg .zone-alignment { fill: #d55e00; fill-opacity: 0.05; }
svg .diagonal { stroke: #888; stroke-width: 1.2; stroke-dasharray: 5 4; }
svg .point circle { fill-opacity: 0.8; stroke: #fff; stroke-width: 1.2; }
svg .point text.n { fill: #fff; font-size: 10px; font-weight: 700; }
svg .legend { fill: #222; font-size: 12px; }
.axis-tag { display: inline-block; padding: 0 6px; border-radius: 3px; color: #fff;
  font-size: 0.85em; white-space: nowrap; }
ul.verdicts { margin: 0; padding-left: 18px; }
ul.verdicts li { margin: 0 0 4px; overflow-wrap: anywhere; }
.why { color: #666; font-size: 0.85em; }
.none { color: #888; }
footer { margin-top: 32px; color: #888; font-size: 0.8em; }
"""


def _axis_tag(axis: str) -> str:
    return f'<span class="axis-tag" style="background:{_COLOURS[axis]}">{_esc(axis)}</span>'


def _summary_html(agg: Mapping[str, Any]) -> str:
    cards = [
        ("items", agg["count"]),
        ("ok", agg["ok"]),
        ("failed", agg["failed"]),
        ("mean score", agg["mean"]),
        ("median score", agg["median"]),
    ]
    out = ['<div class="cards">']
    out += [
        f'<div class="card"><div class="v">{_esc(_num(v))}</div><div class="k">{k}</div></div>'
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
        ("alignment", agg["alignment_mean"], None, None, None),
        ("coverage", agg["coverage_mean"], None, None, None),
    ]
    for name, *values in rows:
        cells = "".join(f'<td class="num">{_esc(_num(v))}</td>' for v in values)
        out.append(f"<tr><th>{name}</th>{cells}</tr>")
    out.append("</tbody></table>")
    out.append(
        '<table class="limited"><thead><tr><th>limited by</th>'
        + "".join(f'<th class="num">{_axis_tag(axis)}</th>' for axis in AXES)
        + "</tr></thead><tbody><tr><th>ok items</th>"
        + "".join(f'<td class="num">{agg["limited_by"][axis]}</td>' for axis in AXES)
        + "</tr></tbody></table>"
    )
    return "\n".join(out)


def _verdict_list(entries: Sequence[tuple[str, str]]) -> str:
    if not entries:
        return '<span class="none">none</span>'
    items = "".join(
        f"<li>{_esc(text)}" + (f' <span class="why">({_esc(why)})</span>' if why else "") + "</li>"
        for text, why in entries
    )
    return f'<ul class="verdicts">{items}</ul>'


def _lowest_html(items: Sequence[Mapping[str, Any]]) -> str:
    indices = lowest_indices(items)
    if not indices:
        return '<p class="none">No scored items.</p>'
    out = [
        '<table class="lowest"><thead><tr><th class="num">#</th><th>id</th>'
        '<th class="num">score</th><th class="num">alignment</th><th class="num">coverage</th>'
        "<th>limited by</th><th>unsupported claims</th><th>unanswered questions</th>"
        "</tr></thead><tbody>"
    ]
    for rank, index in enumerate(indices, start=1):
        item = items[index]
        result = item["result"]
        if result is None:
            claims = questions = '<span class="none">no verdicts recorded</span>'
        else:
            claims = _verdict_list(
                [
                    (v["claim"], v.get("reason", ""))
                    for v in result["preprocessStepResult"]["alignment"]
                    if not v["supported"]
                ]
            )
            questions = _verdict_list(
                [
                    (v["question"], v.get("reason", ""))
                    for v in result["analyzeStepResult"]["coverage"]
                    if not v["answered"]
                ]
            )
        out.append(
            f'<tr><td class="num">{rank}</td><td class="id">{_esc(item["id"])}</td>'
            f'<td class="num">{_esc(_num(item["score"]))}</td>'
            f'<td class="num">{_esc(_num(item["alignment"]))}</td>'
            f'<td class="num">{_esc(_num(item["coverage"]))}</td>'
            f"<td>{_axis_tag(item['limiting_axis'])}</td><td>{claims}</td><td>{questions}</td>"
            "</tr>"
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def _quality_html(quality: Mapping[str, Any]) -> str:
    what, left = _quality_heading(quality)
    level = _num(quality["level"] * 100)
    out = [
        f'<p class="sub">Against the {_esc(what)}; {_esc(left)}.</p>',
        '<table class="quality"><thead><tr><th>figure</th><th class="num">value</th>'
        f'<th class="num">{level}% interval</th><th></th></tr></thead><tbody>',
    ]
    for name, figure, note in _quality_rows(quality):
        out.append(
            f'<tr><th>{_esc(name)}</th><td class="num">{_esc(_num(figure["value"]))}'
            f'</td><td class="num">{_esc(_interval(figure))}</td>'
            f'<td class="why">{_esc(note)}</td></tr>'
        )
    out.append("</tbody></table>")
    if quality["kind"] == "binary":
        c = quality["confusion"]
        out.append(
            f'<table class="confusion"><thead><tr><th>{_esc(quality["rule"])}</th>'
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
            f'<tr><td class="id">{_esc(failure["id"])}</td>'
            f'<td class="num">{_esc(_num(failure["line"]))}</td>'
            f"<td>{_esc(error['type'])}</td><td>{_esc(error['message'])}</td></tr>"
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def render_html(items: Sequence[Mapping[str, Any]], agg: Mapping[str, Any], title: str) -> str:
    """One self-contained page (inline CSS and SVG, no scripts) so it can be mailed or archived."""
    from offline_scorer import __version__

    ok = _ok_items(items)
    if ok:
        charts = (
            '<div class="charts">'
            f"<figure>{_histogram_svg(ok)}<figcaption>Scores of the {len(ok)} ok items in ten "
            "equal bins (each bin includes its lower edge; the last also its upper edge)."
            "</figcaption></figure>"
            f"<figure>{_scatter_svg(ok)}<figcaption>Each point is one item; the score is the "
            "lower of its two axes, so points above the dashed diagonal are limited by "
            "coverage and points below it by alignment. Items at exactly the same spot share "
            "one larger point labelled with their number; hover a point for ids and scores."
            "</figcaption></figure></div>"
        )
    else:
        charts = '<p class="none">No scored items to chart.</p>'
    body = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{_esc(title)}</h1>",
        f'<p class="sub">{agg["count"]} items: {agg["ok"]} scored, {agg["failed"]} failed.</p>',
        "<h2>Summary</h2>",
        _summary_html(agg),
        *(["<h2>Judge quality</h2>", _quality_html(agg["quality"])] if agg.get("quality") else []),
        "<h2>Distribution</h2>",
        charts,
        f"<h2>Lowest scores ({len(agg['lowest'])})</h2>",
        _lowest_html(items),
        f"<h2>Failures ({len(agg['failures'])})</h2>",
        _failures_html(agg),
        f"<footer>offline-scorer {_esc(__version__)} report</footer>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(body)


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
