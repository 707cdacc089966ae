"""Calibrating a judge on labelled data: the threshold of its verdicts, and what it is worth.

Two readings of people's labels: `verdicts` calibrates the verdict threshold against a label of
the whole pair (faithful or not, on the kind's judged axis); `items` calibrates the threshold
of verdicts on listed items against a label of each item (coverage: does this summary state
this fact?). Both sit above `batch/` (datasets) and `report/` (statistics) and know no kind by
name.
"""

from offline_scorer.calibration.items import (
    ItemCase,
    ItemsCalibration,
    calibrate_items,
    collect_items,
    item_quality,
    read_item_cases,
    write_item_threshold,
)
from offline_scorer.calibration.verdicts import (
    Calibration,
    Labelled,
    calibrate,
    collect,
    label_of,
    measured_quality,
    probability_reader,
    write_threshold,
)

__all__ = [
    "Calibration",
    "ItemCase",
    "ItemsCalibration",
    "Labelled",
    "calibrate",
    "calibrate_items",
    "collect",
    "collect_items",
    "item_quality",
    "label_of",
    "measured_quality",
    "probability_reader",
    "read_item_cases",
    "write_item_threshold",
    "write_threshold",
]
