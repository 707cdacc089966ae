"""The installed offline-scorer's version, in the bottom layer: results, reports and the CLI
name it, and none of them may import the package root (which reaches every layer)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("offline-scorer")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
