"""Did a change make the judge worse? The paired difference of ROC AUC between two runs.

    python -m benchmarks.auc_change BEFORE.jsonl AFTER.jsonl [--label faithful] [--axis NAME]

Either file may also be a `benchmarks/ceiling.py` output (one plain read per row) or an
`offline-scorer calibrate --per-row` file (the preprocess step's weakest claim): then only the
weakest P(true) is compared, which is how the pipeline is held to a judge's ceiling.

Two eval results files over the same labelled rows (say, the dev set before and after a change to
the requests) each give a ROC AUC with a wide interval: 200 rows put about 0.07 either side of
it. Two such intervals overlapping says little; the question is how large the *difference* is
when both runs are resampled together. This draws the same rows for both runs in each
resample (a paired percentile bootstrap, 2000 resamples, seed 0, as `report` does) and prints
the AUC of each run and of their difference with its 95% interval, for each scored axis and for
the weakest verdict probability. An interval of the difference that contains 0 means the
change moved the AUC by less than these rows can tell apart from resampling noise.

Rows are matched by id; only rows that are ok in both files and carry the label count.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from offline_scorer.report.lines import read_results, weakest_probability
from offline_scorer.report.quality import binary_label
from offline_scorer.report.stats import bootstrap_ci, roc_auc

Reader = Callable[[Mapping[str, Any]], float | None]


def _axis_reader(name: str) -> Reader:
    def read(item: Mapping[str, Any]) -> float | None:
        value = item["axes"].get(name)
        return None if value is None else float(value)

    return read


def _weakest(item: Mapping[str, Any]) -> float | None:
    """The weakest verdict's P(true): a plain read's one verdict, or a result's weakest."""
    if "p_true" in item:
        return float(item["p_true"])
    return weakest_probability(item)


def _readers(items: Sequence[Mapping[str, Any]], axis: str | None) -> dict[str, Reader]:
    axes = [axis] if axis else list(items[0]["axes"]) if items and "axes" in items[0] else []
    readers: dict[str, Reader] = {name: _axis_reader(name) for name in axes}
    readers["weakest P(true)"] = _weakest
    return readers


def _ok_by_id(path: Path, label: str) -> dict[str, tuple[Mapping[str, Any], bool]]:
    found: dict[str, tuple[Mapping[str, Any], bool]] = {}
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    if first and "p_true" in json.loads(first):  # one P(true) a row: benchmarks.ceiling, or
        for line in path.read_text(encoding="utf-8").splitlines():  # calibrate --per-row
            row = json.loads(line)
            found[str(row["id"])] = (row, bool(row[label]))
        return found
    for item in read_results(path):
        value = binary_label((item.get("metadata") or {}).get(label))
        if item["status"] == "ok" and value is not None:
            found[item["id"]] = (item, value)
    return found


def _difference(before: Sequence[float], after: Sequence[float], labels: Sequence[bool]) -> Any:
    old, new = roc_auc(before, labels), roc_auc(after, labels)
    return None if old is None or new is None else new - old


def compare(before: Path, after: Path, label: str, axis: str | None) -> dict[str, Any]:
    old, new = _ok_by_id(before, label), _ok_by_id(after, label)
    ids = [i for i in old if i in new]
    if not ids:
        raise SystemExit(f"error: no id is ok and labelled {label!r} in both files")
    relabelled = [i for i in ids if old[i][1] != new[i][1]]
    if relabelled:
        raise SystemExit(f"error: row {relabelled[0]!r} has different labels in the two files")
    figures: dict[str, Any] = {"rows": len(ids), "label": label, "figures": {}}
    plain = any("p_true" in found[ids[0]][0] for found in (old, new))
    readers = _readers([] if plain else [old[i][0] for i in ids], axis)
    for name, read in readers.items():
        pairs = [(read(old[i][0]), read(new[i][0]), old[i][1]) for i in ids]
        kept = [(a, b, y) for a, b, y in pairs if a is not None and b is not None]
        if not kept:
            continue
        columns = [list(column) for column in zip(*kept, strict=True)]
        interval = bootstrap_ci(_difference, columns)
        figures["figures"][name] = {
            "rows": len(kept),
            "before": round(roc_auc(columns[0], columns[2]) or 0.0, 4),
            "after": round(roc_auc(columns[1], columns[2]) or 0.0, 4),
            "difference": round(_difference(*columns), 4),
            "interval": None if interval is None else [round(v, 4) for v in interval],
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--label", default="faithful", help="the binary label field")
    parser.add_argument("--axis", help="one axis only (default: every axis of the results)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = compare(args.before, args.after, args.label, args.axis)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{figures['rows']} rows labelled {args.label!r}, ok in both runs")
    print(f"{'ROC AUC of':18} {'before':>7} {'after':>7} {'change':>7}  95% interval of the change")
    for name, f in figures["figures"].items():
        low, high = f["interval"] or (float("nan"), float("nan"))
        verdict = "contains 0: not distinguishable" if low <= 0 <= high else "excludes 0"
        print(
            f"{name:18} {f['before']:7.4f} {f['after']:7.4f} {f['difference']:+7.4f}  "
            f"[{low:+.4f}, {high:+.4f}]  {verdict}"
        )


if __name__ == "__main__":
    main()
