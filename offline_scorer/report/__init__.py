"""Reports on a results file: a generic score plus named axes, as a table and one HTML page.

aggregate reads and checks the lines and computes the run's numbers as a typed `Aggregate`
(model); table prints it; charts computes the charts' geometry; html renders the page from the
Jinja2 templates in templates/. quality and stats add judge-quality figures.

The function `aggregate` is exported under its module's name, so the attribute
`offline_scorer.report.aggregate` is the function; `from offline_scorer.report.aggregate
import ...` still reaches the module.
"""

from __future__ import annotations

from offline_scorer.report.aggregate import LOWEST_COUNT, aggregate, lowest_indices
from offline_scorer.report.axes import axes_of
from offline_scorer.report.html import render_html, write_html, write_report
from offline_scorer.report.lines import ResultLine, check_line, kind_of, read_results
from offline_scorer.report.model import Aggregate
from offline_scorer.report.table import format_table

__all__ = [
    "LOWEST_COUNT",
    "Aggregate",
    "ResultLine",
    "aggregate",
    "axes_of",
    "check_line",
    "format_table",
    "kind_of",
    "lowest_indices",
    "read_results",
    "render_html",
    "write_html",
    "write_report",
]
