"""What several commands share: reading a text argument, and saying where exchanges went."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from offline_scorer.files import decode_text
from offline_scorer.files import read_text as files_read_text
from offline_scorer.judging.protocol import Judge
from offline_scorer.models.registry import ModelSpec


def read_text(value: str, option: str) -> str:
    """A UTF-8 text file, or stdin for '-'; a leading BOM and the final line break are dropped."""
    if value == "-":
        data = sys.stdin.buffer.read()
        text = decode_text(data, option, "standard input")
    else:
        text = files_read_text(Path(value), option)
    # A text file's final line break belongs to the file, not to the text being judged.
    return text.removesuffix("\n").removesuffix("\r")


def report_cassette(judge: Judge) -> None:
    """Tell the user where exchanges went: a recording is only useful if you can find it."""
    from offline_scorer.cassette.judge import cassette_stats

    stats = cassette_stats(judge)
    if stats is None or stats.path is None:
        return
    if stats.recorded:
        click.echo(
            f"recorded {stats.recorded} exchange(s) to {stats.path} "
            f"(replay: --record-mode replay --cassette {stats.path})",
            err=True,
        )
    if stats.hits:
        click.echo(f"replayed {stats.hits} exchange(s) from {stats.path}", err=True)


def show_quality(model: ModelSpec, as_json: bool) -> None:
    """What the judge's registry entry says it is worth, beside the scores just printed (see
    `KindPart.figures`); with --json only the warnings, on standard error, so the JSON stays
    the result alone."""
    lines, warnings = model.part(model.kind).figures()
    if not as_json:
        for line in lines:
            click.echo(line)
    for warning in warnings:
        click.echo(warning, err=as_json)
