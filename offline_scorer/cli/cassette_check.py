"""`offline-scorer cassette digest|verify|keygen|sign`: is this the recording that was published?

Integrity (CRCs, strict decoding, keys recomputed), the content digest a paper cites, its
optional signature, and a live re-run on this machine's model; the other cassette commands
are in `cassette.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from offline_scorer.cassette.records import Exchange, from_payload
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.cassette.store.salvage import verify
from offline_scorer.cli.options import ScorerChoice, model_options, scorer_options
from offline_scorer.errors import CassetteFileError, InputError

if TYPE_CHECKING:
    from offline_scorer.assembly.rerun import RerunReport

_path = click.argument("path", type=click.Path(dir_okay=False, path_type=Path))


def open_cassette(path: Path) -> CassetteFile:
    if not path.is_file():
        raise InputError(f"no such cassette: {path}")
    return CassetteFile(path, create=False)


def read_exchanges(cassette: CassetteFile) -> list[Exchange]:
    return [from_payload(cassette, key, payload) for key, payload in cassette.iter_exchanges()]


def _check_keys(cas: CassetteFile) -> int:
    """Exchanges whose stored key does not match their stored request (tampering)."""
    return sum(1 for ex in read_exchanges(cas) if ex.parts.digest() != ex.key)


@click.command("digest")
@_path
def digest_command(path: Path) -> None:
    """The content digest: one sha256 over every exchange's key and response (to cite).

    It ignores the file's framing, blob layout and record order, so merge, repair and
    re-recording the same exchanges keep it; any change of an answer changes it
    (definition: docs/reproducibility.md)."""
    from offline_scorer.cassette.digest import content_digest

    digest = content_digest(path)
    click.echo(f"{digest}  {path}  ({digest.exchanges} exchanges)")


@click.command("keygen")
@click.argument("private", type=click.Path(dir_okay=False, path_type=Path))
def keygen_command(private: Path) -> None:
    """Write a new Ed25519 key pair: PRIVATE (keep it) and PRIVATE.pub.pem (publish it).

    Needs the 'sign' extra (cryptography)."""
    from offline_scorer.cassette.signature import generate_key

    public = generate_key(private)
    click.echo(f"wrote {private} (private, mode 600) and {public} (public)")


@click.command("sign")
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


@click.command("verify")
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
    model: str | None,
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
    with open_cassette(path) as cas:
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

    report = rerun_exchanges(sample(read_exchanges(cas), count), threads)
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
    model: str | None,
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
