"""The `offline-scorer` command: a thin click layer over the library, one file per command group."""

from offline_scorer.cli.app import cli, main

__all__ = ["cli", "main"]
