"""`offline-scorer cassette ...`: look inside, check, re-run, merge and repair cassettes."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from offline_scorer.cassette.fields import DUMPED
from offline_scorer.cassette.records import Exchange, from_payload
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.cassette.store.salvage import repair, verify
from offline_scorer.cli.options import ScorerChoice, model_options, scorer_options
from offline_scorer.errors import CassetteFileError, InputError, OfflineScorerError

if TYPE_CHECKING:
    from offline_scorer.assembly.rerun import RerunReport

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
    """Recorded model exchanges: show, dump, digest, verify, sign, merge, upgrade, repair."""


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
        formats = Counter((ex.parts.key_format, ex.parts.backend) for ex in exchanges)
        for (key_format, backend), count in sorted(formats.items()):
            click.echo(f"keys:      format {key_format}, backend {backend}: {count}")
        counts = Counter((ex.parts.model_sha256, ex.step) for ex in exchanges)
        for (sha, step), count in sorted(counts.items()):
            model = names.get(sha, "unregistered model")
            click.echo(f"  {model} ({sha[:12]})  {step:<10} {count}")


@cassette.command()
@_path
def dump(path: Path) -> None:
    """Every exchange as one JSON line, texts expanded (for review and diffs).

    A record shows the key fields of its own key format: the schema as JSON (format 3), the
    grammar text (formats 1 and 2)."""
    with _open(path) as cas:
        for ex in _exchanges(cas):
            record: dict[str, Any] = {
                "key": ex.key.hex(),
                "step": ex.step,
                **{
                    field.name: field.show(getattr(ex.parts, field.name))
                    for field in DUMPED
                    if field.in_format(ex.parts.key_format)
                },
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


@cassette.command("digest")
@_path
def digest_command(path: Path) -> None:
    """The content digest: one sha256 over every exchange's key and response (to cite).

    It ignores the file's framing, blob layout and record order, so merge, repair and
    re-recording the same exchanges keep it; any change of an answer changes it
    (definition: docs/reproducibility.md)."""
    from offline_scorer.cassette.digest import content_digest

    digest = content_digest(path)
    click.echo(f"{digest}  {path}  ({digest.exchanges} exchanges)")


@cassette.command("keygen")
@click.argument("private", type=click.Path(dir_okay=False, path_type=Path))
def keygen_command(private: Path) -> None:
    """Write a new Ed25519 key pair: PRIVATE (keep it) and PRIVATE.pub.pem (publish it).

    Needs the 'sign' extra (cryptography)."""
    from offline_scorer.cassette.signature import generate_key

    public = generate_key(private)
    click.echo(f"wrote {private} (private, mode 600) and {public} (public)")


@cassette.command("sign")
@_path
@click.option(
    "--key",
    "private",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Your Ed25519 private key (PEM, from `cassette keygen`).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The signature file [default: PATH.sig].",
)
def sign_command(path: Path, private: Path, out: Path | None) -> None:
    """Sign the cassette's content digest: a detached signature to publish beside it.

    Needs the 'sign' extra (cryptography)."""
    from offline_scorer.cassette.digest import content_digest
    from offline_scorer.cassette.signature import sign_digest, signature_text
    from offline_scorer.files import atomic_write_text

    digest = str(content_digest(path))
    out = out or path.with_name(path.name + ".sig")
    atomic_write_text(out, signature_text(digest, sign_digest(digest, private)))
    click.echo(f"signed {digest} of {path}: {out}")


@cassette.command("verify")
@_path
@click.option(
    "--digest",
    "expected",
    default=None,
    metavar="DIGEST",
    help="A published content digest (as `cassette digest` prints it) the file must have.",
)
@click.option(
    "--signature",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A signature file (`cassette sign`) whose digest the file must have; with --public-key.",
)
@click.option(
    "--public-key",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The signer's Ed25519 public key (PEM) the signature must check against.",
)
@click.option(
    "--live", is_flag=True, help="Re-run exchanges on the live model and compare the answers."
)
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    default=None,
    help="With --live: re-run only this many exchanges (items with --data), spread evenly.",
)
@click.option(
    "--data",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --live: the dataset PATH was recorded from; items are scored live and from "
    "PATH, and the score change per item is shown (give the run's --scorer options).",
)
@click.option("--threads", type=click.IntRange(min=1), default=None)
@scorer_options
@model_options
def verify_command(
    path: Path,
    expected: str | None,
    signature: Path | None,
    public_key: Path | None,
    live: bool,
    sample: int | None,
    data: Path | None,
    threads: int | None,
    scorer: ScorerChoice,
    model: str,
    backend: str | None,
) -> None:
    """Integrity (checksums, strict decoding, keys); with --digest, that the content is the
    published one (with --signature, the one its signer signed); with --live, reproducibility
    on this machine."""
    if (sample is not None or data is not None) and not live:
        raise InputError("--sample and --data go with --live")
    if (signature is None) != (public_key is None):
        raise InputError("--signature and --public-key go together")
    from offline_scorer.cassette.digest import parse_digest

    wanted = None if expected is None else parse_digest(expected)
    if signature is not None and public_key is not None:
        from offline_scorer.cassette.signature import read_signature, verify_signature

        signed, signed_bytes = read_signature(signature)
        verify_signature(signed, signed_bytes, public_key)
        signed_hex = parse_digest(signed)
        if wanted is not None and wanted != signed_hex:
            raise InputError(f"--digest and the digest {signature} signs differ")
        wanted = signed_hex
    report = verify(path)
    if not report.ok:
        raise CassetteFileError(f"DAMAGED {path}: {report.problem}")
    with _open(path) as cas:
        mismatched = _check_keys(cas)
        if mismatched:
            raise CassetteFileError(
                f"DAMAGED {path}: {mismatched} exchange(s) do not match their keys"
            )
        if wanted is not None:
            _check_digest(path, wanted)
        click.echo(
            f"ok {path}: {report.records} intact records, {report.exchanges} exchanges, "
            f"{report.blobs} blobs"
            + ("" if wanted is None else ", content digest matches")
            + ("" if signature is None else f", signed by the key in {public_key}")
        )
        if live and data is not None:
            _verify_items(path, data, sample, threads, scorer, model, backend)
        elif live:
            _verify_live(cas, threads, sample)


def _check_digest(path: Path, wanted: str) -> None:
    from offline_scorer.cassette.digest import DIGEST_PREFIX, content_digest

    found = content_digest(path)
    if found.hex != wanted:
        raise CassetteFileError(
            f"CONTENT DIFFERS {path}: content digest {found}, expected {DIGEST_PREFIX}{wanted} "
            "(an answer or request was changed, added or removed)"
        )


def _print_rerun(report: RerunReport) -> None:
    click.echo(
        f"live: {report.same_text} of {report.compared} responses identical, "
        f"{report.same_verdicts} of {report.compared} with identical verdicts; largest change "
        f"of a recorded verdict probability {report.largest_change:.3g}"
        + ("" if report.largest_at is None else f" ({report.largest_at})")
    )
    if report.unmatched:
        click.echo(
            f"live: {report.unmatched} request(s) no record answers (they follow an earlier "
            "changed answer of the same item)"
        )
    for line in report.drifted:
        click.echo(f"  drift {line}")


def _verify_live(cas: CassetteFile, threads: int | None, count: int | None) -> None:
    from offline_scorer.assembly.rerun import rerun_exchanges, sample

    report = rerun_exchanges(sample(_exchanges(cas), count), threads)
    total = report.same + len(report.drifted)
    click.echo(f"live: {report.same} of {total} exchanges came back byte-identical")
    _print_rerun(report)
    if report.drifted:
        sys.exit(1)


def _verify_items(
    path: Path,
    data: Path,
    count: int | None,
    threads: int | None,
    scorer: ScorerChoice,
    model: str,
    backend: str | None,
) -> None:
    from offline_scorer.assembly.drift import item_drift
    from offline_scorer.assembly.open import JudgeSettings
    from offline_scorer.assembly.rerun import sample
    from offline_scorer.assembly.run_spec import RunSpec
    from offline_scorer.batch.datasets import iter_dataset

    run = RunSpec.of(
        scorer.kind, scorer.options(), JudgeSettings(model=model, backend=backend, threads=threads)
    )
    items = sample(list(iter_dataset(data)), count)
    report, drifts = item_drift(run, path, items)
    _print_rerun(report)
    changed = 0
    for drift in drifts:
        change = drift.change
        shown = "failed" if change is None else f"{change:+.4f}"
        changed += drift.recorded != drift.live
        click.echo(
            f"  item {drift.id}: recorded {drift.recorded}, live {drift.live}, change {shown}"
        )
    click.echo(f"live: {len(drifts) - changed} of {len(drifts)} item scores unchanged")
    if report.drifted or report.unmatched or changed:
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


@cassette.command("upgrade")
@click.argument("old", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--data",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The dataset OLD was recorded from (.jsonl or .csv, as for eval).",
)
@click.option(
    "--out",
    "new",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The upgraded cassette to write (OLD is left as it is).",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@scorer_options
@model_options
def upgrade_command(
    old: Path,
    data: Path,
    new: Path,
    overwrite: bool,
    scorer: ScorerChoice,
    model: str,
    backend: str | None,
) -> None:
    """Re-key a cassette of an older key format by scoring DATA with its answers.

    Give the scorer kind and options, model and backend it was recorded with.
    """
    from offline_scorer.assembly.run_spec import RunSpec
    from offline_scorer.assembly.upgrade import upgrade_cassette
    from offline_scorer.batch.datasets import iter_dataset

    recipe = RunSpec.of(scorer.kind, scorer.options())
    report = upgrade_cassette(
        old,
        new,
        iter_dataset(data),
        recipe.scorer_on,
        model=model,
        backend=backend,
        overwrite=overwrite,
    )
    click.echo(f"{new}: converted {report.converted} exchange(s) from {old}")
    if report.failed_items or report.skipped_items:
        click.echo(
            f"  items: {report.failed_items} failed on a recorded answer, "
            f"{report.skipped_items} unreadable or without output (as when recorded)"
        )
    unreached = sum(report.unreached.values())
    steps = ", ".join(f"{step} {count}" for step, count in report.unreached.items())
    click.echo(
        f"  {unreached} record(s) of {old} were not reached" + (f" ({steps})" if steps else "")
    )


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
