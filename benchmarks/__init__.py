"""The project's benchmarks: each module is one measurement, run as `python -m benchmarks.NAME`
from the repository root (docs/benchmarks.md gives each command and its current figures).

A package, not loose scripts, so that the scripts share `benchmarks._common` and reach each
other by import instead of each editing `sys.path`. It is a development tree: it is not part of
the installed distribution (pyproject.toml packages only `offline_scorer`).
"""
