"""What several commands share: reading a text argument, and saying where exchanges went."""

from __future__ import annotations

from pathlib import Path

import click

from offline_scorer.files import decode_text
from offline_scorer.files import read_text as files_read_text
from offline_scorer.judging.protocol import Judge
from offline_scorer.models.registry import ModelSpec


def read_text(value: str, option: str) -> str:
    """A UTF-8 text file, or stdin for '-'; a leading BOM and the final line break are dropped."""
    if value == "-":
        data = click.get_binary_stream("stdin").read()
        text = decode_text(data, option, "standard input")
    else:
        text = files_read_text(Path(value), option)
    # A text file's final line break belongs to the file, not to the text being judged.
    return text.removesuffix("\n").removesuffix("\r")


def report_cassette(judge: Judge) -> None:
    """Tell the user where exchanges went: a recording is only useful if you can find it."""
    from offline_scorer.cassette.judge import CassetteJudge

    if not isinstance(judge, CassetteJudge):
        return
    if judge.recorded:
        click.echo(
            f"recorded {judge.recorded} exchange(s) to {judge.path} "
            f"(replay: --record-mode replay --cassette {judge.path})",
            err=True,
        )
    if judge.hits:
        click.echo(f"replayed {judge.hits} exchange(s) from {judge.path}", err=True)


def show_quality(model: ModelSpec, as_json: bool) -> None:
    """What the judge's registry entry says it is worth, beside the scores just printed; with
    --json only the warning, on standard error, so the JSON stays the result alone."""
    quality = model.quality
    if quality is None:
        return
    if not as_json:
        click.echo(quality.line())
    for warning in quality.warnings():
        click.echo(warning, err=as_json)
