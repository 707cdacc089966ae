"""Bringing recordings of an earlier format forward, so the replay path knows only the current
one: a cassette without a recipe in its header, a results file without a recipe header.

Neither step changes a recorded answer. A cassette keeps every frame after its header byte
for byte (so its content digest, what a paper cites, is the same), and gains a header naming
the run that made it. A results file keeps every line's fields and gains a header, but only
after each line's digest has been derived again from the data under the recipe given: the
digest covers the scorer kind, every option and the judge's identity, so a header can never
state a recipe the lines were not made with.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.assembly.migrate.decoders import replayed_id_of_file
from offline_scorer.assembly.open import JudgeSettings
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.batch.datasets import iter_dataset
from offline_scorer.batch.results import LineProblem, ResultsLine, file_header, parse_line
from offline_scorer.batch.run import item_context, item_digest
from offline_scorer.cassette.digest import content_digest
from offline_scorer.cassette.records import recorded_models
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.cassette.store.frames import encode_header
from offline_scorer.errors import InputError
from offline_scorer.files import open_binary, temp_sibling
from offline_scorer.formats import RESULTS_FORMAT
from offline_scorer.models.registry import load_registry
from offline_scorer.scorers.registry import DEFAULT_KIND, get_spec

__all__ = [
    "FORMER_DEFAULTS",
    "Migrated",
    "migrate_cassette",
    "migrate_results",
    "run_without_recipe",
]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Migrated:
    """What a migration wrote: the file, and a line for the user."""

    out: Path
    summary: str


FORMER_DEFAULTS: Mapping[str, Mapping[str, Any]] = {"summarization": {"splitting": 1}}
"""Per scorer kind, the options whose defaults moved once recordings carried their recipes,
at the value they had through offline-scorer 0.4 (`splitting` 1: a time's "a.m." ended every
sentence). A results file of format 2, or a cassette without a recipe that a release through
0.4 wrote, was made under these unless the model's registry entry or the user chose otherwise;
a cassette a later release wrote without a recipe (through the library, whose options are the
caller's code) was made under today's defaults."""

_FORMER_RELEASE = re.compile(r"offline-scorer/0\.[0-4](?:\.\d+)*(?:\s|$)")
"""A cassette writer naming a release through 0.4, whose defaults were `FORMER_DEFAULTS`."""


def run_without_recipe(
    kind: str | None, options: Mapping[str, Any], settings: JudgeSettings, writer: str | None
) -> RunSpec:
    """The run a file without a recipe was made by, from the flags the user gives: the
    options over the model's registry defaults over the defaults of the release that wrote it
    (`writer`, a cassette's; None for a format 2 results file, which only releases through 0.4
    wrote)."""
    spec = get_spec(kind or DEFAULT_KIND)
    registry = load_registry().resolve(settings.model).scorer_options.get(spec.kind, {})
    former = writer is None or _FORMER_RELEASE.match(writer) is not None
    defaults = FORMER_DEFAULTS.get(spec.kind, {}) if former else {}
    cassette = settings.cassette
    if not settings.mode.runs_model and cassette is not None and cassette.is_file():
        # its decoder is named only by its records' keys: the recipe names the same one
        answered_under = replayed_id_of_file(cassette, settings.model, settings.backend)
        settings = dataclasses.replace(
            settings, recorded_backend=settings.recorded_backend or answered_under
        )
    return RunSpec.of(spec.kind, {**defaults, **registry, **options}, settings)


def migrate_cassette(path: Path, run: RunSpec, out: Path) -> Migrated:
    """Write `path` to `out` (may be `path`: replaced atomically) with `run`'s recipe in its
    header; refused when the cassette holds records of another model than the run's."""
    with CassetteFile(path, create=False) as cassette:
        if cassette.recipe is not None:
            return Migrated(path, f"{path} already carries its recipe; nothing to do")
        writer, header_end = cassette.writer, cassette.header_end
        models = recorded_models(cassette)
        count = cassette.exchange_count
    recipe = run.recorded()
    others = sorted(m for m in models if m != recipe.model_sha256)
    if recipe.model_sha256 is None or others:
        held = ", ".join(m[:12] for m in sorted(models)) or "none"
        raise InputError(
            f"{path} holds records of model sha256 {held}, not only of {recipe.model!r}; "
            "pass the --model it was recorded with"
        )
    before = content_digest(path)

    def chunks() -> Iterator[bytes]:
        yield encode_header(writer, recipe.to_map())
        with path.open("rb") as handle:
            handle.seek(header_end)
            while block := handle.read(_CHUNK):
                yield block

    _replace(out, chunks())
    after = content_digest(out)
    if after != before:  # a framing slip must never pass as a migration
        raise AssertionError(f"migrating {path} changed its content digest")
    return Migrated(
        out, f"migrated {path} -> {out}: {count} exchanges, {recipe.describe()}; {after}"
    )


def migrate_results(path: Path, data: Path, run: RunSpec, out: Path) -> Migrated:
    """Write the format 2 results file `path` to `out` as format 3: `run`'s recipe as header,
    then its lines, each checked first against the digest `run` derives for its data row."""
    if file_header(path) is not None:
        return Migrated(path, f"{path} already carries its recipe header; nothing to do")
    if not data.is_file():
        raise InputError(f"no such dataset: {data}")
    with run.identity_judge() as judge:
        context = item_context([run.scorer_on(judge)])
    items = iter_dataset(data)
    lines = [run.results_header()]
    with open_binary(path, "results file") as handle:
        for number, raw in enumerate(handle, start=1):
            line = _line(path, number, raw)
            item = next(items, None)
            if item is None or item.id != line.id:
                raise InputError(
                    f"{path} line {number} (id {line.id!r}) is not row {number} of {data}; "
                    "give the dataset the run scored"
                )
            if item_digest(item, context) != line.digest:
                raise InputError(
                    f"{path} line {number} (id {line.id!r}) was not made with the recipe "
                    f"given ({run.recorded().describe()}): pass the run's --model and options"
                )
            lines.append(line.model_copy(update={"format": RESULTS_FORMAT}).to_line())
    _replace(out, (text.encode("utf-8") + b"\n" for text in lines))
    return Migrated(out, f"migrated {path} -> {out}: {len(lines) - 1} lines, format 3")


def _line(path: Path, number: int, raw: bytes) -> ResultsLine:
    """A format 2 line of `path`; format 1 and broken lines are refused in one line each."""
    try:
        record = json.loads(raw)
    except ValueError:
        raise InputError(f"{path} line {number} is not JSON; is this a results file?") from None
    if isinstance(record, dict) and "format" not in record:
        raise InputError(
            f"{path} is a results file of format 1 (offline-scorer 0.2), whose digests do not "
            "cover the judge's whole identity, so no recipe can be checked against them; "
            "score the data again"
        )
    try:
        return parse_line(record)
    except LineProblem as error:
        raise InputError(f"{path} line {number}: {error}") from None


def _replace(out: Path, chunks: Iterator[bytes]) -> None:
    """Write `out` whole, then put it in place atomically (a reader sees the old or the new)."""
    try:
        tmp = temp_sibling(out, chunks)
        os.replace(tmp, out)
    except OSError as error:
        raise InputError(f"cannot write {out}: {error.strerror or error}") from None
