"""`offline-scorer cassette ...`: look inside, check, re-run, merge and repair cassettes."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click

from offline_scorer.cassette.fields import DUMPED, sampling_settings
from offline_scorer.cassette.records import Exchange, from_payload
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.cassette.store.salvage import repair, verify
from offline_scorer.errors import CassetteFileError, InputError, OfflineScorerError

_path = click.argument("path", type=click.Path(dir_okay=False, path_type=Path))


def _open(path: Path) -> CassetteFile:
    if not path.is_file():
        raise InputError(f"no such cassette: {path}")
    return CassetteFile(path, create=False)


def _exchanges(cassette: CassetteFile) -> list[Exchange]:
    return [from_payload(cassette, key, payload) for key, payload in cassette.iter_exchanges()]


def _model_names() -> dict[str, str]:
    from offline_scorer.models.registry import load_registry

    try:
        registry = load_registry()
    except OfflineScorerError:  # a broken user registry should not hide the cassette
        return {}
    return {spec.sha256: name for name, spec in registry.models.items() if spec.sha256}


@click.group()
def cassette() -> None:
    """Recorded model exchanges: show, dump, verify, merge, repair."""


@cassette.command()
@_path
def show(path: Path) -> None:
    """Format version, size, and exchange counts by model and step."""
    with _open(path) as cas:
        exchanges = _exchanges(cas)
        names = _model_names()
        click.echo(f"cassette:  {path}")
        click.echo(f"format:    version {cas.format_version}, written by {cas.writer}")
        click.echo(
            f"size:      {cas.size_bytes} bytes, {len(exchanges)} exchange records "
            f"({cas.exchange_count} distinct keys), {cas.blob_count} blobs"
        )
        counts = Counter((ex.parts.model_sha256, ex.step) for ex in exchanges)
        for (sha, step), count in sorted(counts.items()):
            model = names.get(sha, "unregistered model")
            click.echo(f"  {model} ({sha[:12]})  {step:<10} {count}")


@cassette.command()
@_path
def dump(path: Path) -> None:
    """Every exchange as one JSON line, texts expanded (for review and diffs)."""
    with _open(path) as cas:
        for ex in _exchanges(cas):
            record: dict[str, Any] = {
                "key": ex.key.hex(),
                "step": ex.step,
                **{field.name: field.show(getattr(ex.parts, field.name)) for field in DUMPED},
                "response": ex.text,
                "verdict_probabilities": None
                if ex.completion.verdict_probabilities is None
                else list(ex.completion.verdict_probabilities),
                "meta": dict(ex.meta),
            }
            click.echo(json.dumps(record, ensure_ascii=False))


def _check_keys(cas: CassetteFile) -> int:
    """Exchanges whose stored key does not match their stored request (tampering)."""
    return sum(1 for ex in _exchanges(cas) if ex.parts.digest() != ex.key)


@cassette.command("verify")
@_path
@click.option(
    "--live", is_flag=True, help="Re-run every exchange on the live model and compare the bytes."
)
@click.option("--threads", type=click.IntRange(min=1), default=None)
def verify_command(path: Path, live: bool, threads: int | None) -> None:
    """Integrity (checksums, strict decoding, keys); with --live, reproducibility too."""
    report = verify(path)
    if not report.ok:
        raise CassetteFileError(f"DAMAGED {path}: {report.problem}")
    with _open(path) as cas:
        mismatched = _check_keys(cas)
        if mismatched:
            raise CassetteFileError(
                f"DAMAGED {path}: {mismatched} exchange(s) do not match their keys"
            )
        click.echo(
            f"ok {path}: {report.records} intact records, {report.exchanges} exchanges, "
            f"{report.blobs} blobs"
        )
        if live:
            _verify_live(cas, threads)


def _verify_live(cas: CassetteFile, threads: int | None) -> None:
    from offline_scorer.backends.llama_cpp.judge import LlamaJudge
    from offline_scorer.cassette.miss import identity_differences
    from offline_scorer.judging.protocol import Message
    from offline_scorer.models.registry import load_registry

    registry = load_registry()
    by_sha = {spec.sha256: spec for spec in registry.models.values() if spec.sha256}
    judges: dict[tuple[str, float | None], LlamaJudge] = {}
    same, drifted = 0, []
    for ex in _exchanges(cas):
        spec = by_sha.get(ex.parts.model_sha256)
        if spec is None:
            drifted.append(
                f"{ex.key.hex()[:12]} {ex.step}: model {ex.parts.model_sha256[:12]} "
                "is not in the registry"
            )
            continue
        threshold = ex.parts.verdict_threshold
        if threshold is not None:
            spec = spec.model_copy(update={"verdict_threshold": threshold})
        judge = judges.get((spec.name, threshold)) or judges.setdefault(
            (spec.name, threshold), LlamaJudge(spec, threads=threads)
        )
        changed = identity_differences(ex.parts, judge.identity)
        if changed:
            drifted.append(f"{ex.key.hex()[:12]} {ex.step}: " + "; ".join(changed))
            continue
        messages = [Message(role, content) for role, content in ex.parts.messages]
        settings = sampling_settings(ex.parts.sampling)
        generation = judge.generate(ex.step, messages, ex.parts.grammar, settings)
        text = generation.text
        recorded_p = ex.completion.verdict_probabilities
        if text == ex.text and (
            recorded_p is None or generation.verdict_probabilities == recorded_p
        ):
            same += 1
        elif text == ex.text:
            drifted.append(
                f"{ex.key.hex()[:12]} {ex.step}: same text, different verdict probabilities"
            )
        else:
            at = next(
                (i for i, (a, b) in enumerate(zip(text, ex.text, strict=False)) if a != b),
                min(len(text), len(ex.text)),
            )
            drifted.append(f"{ex.key.hex()[:12]} {ex.step}: differs from character {at}")
    total = same + len(drifted)
    click.echo(f"live: {same} of {total} exchanges came back byte-identical")
    for line in drifted:
        click.echo(f"  drift {line}")
    if drifted:
        sys.exit(1)


@cassette.command()
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def merge(output: Path, inputs: tuple[Path, ...]) -> None:
    """Append the exchanges of INPUTS to OUTPUT (created if missing), skipping known keys."""
    from offline_scorer.cassette.records import to_payload

    added = skipped = 0
    with CassetteFile(output, create=True) as out:
        for source in inputs:
            with _open(source) as cas:
                for ex in _exchanges(cas):
                    if out.get_exchange(ex.key) is not None:
                        skipped += 1
                        continue
                    out.append_exchange(
                        ex.key, to_payload(out, ex.step, ex.parts, ex.completion, ex.meta)
                    )
                    added += 1
    click.echo(f"{output}: added {added} exchange(s), skipped {skipped} already present")


@cassette.command("repair")
@_path
def repair_command(path: Path) -> None:
    """Keep every intact record of a damaged cassette (the original is kept as PATH.bak)."""
    report = repair(path)
    if not report.changed:
        click.echo(f"{path}: intact, nothing to repair ({report.kept_records} records)")
        return
    click.echo(
        f"{path}: kept {report.kept_records} records ({report.kept_bytes} bytes), dropped "
        f"{report.dropped_bytes} damaged bytes in {report.dropped_ranges} range(s); "
        f"original saved as {report.backup_path}"
    )
