"""Ed25519 signatures of a content digest: `cassette keygen`, `sign`, `verify --signature`."""

from __future__ import annotations

import shutil
import stat
from dataclasses import replace

import pytest

from offline_scorer.cassette.digest import content_digest
from tests.conftest import FIXTURES
from tests.test_cassette_digest import _copy_with, _first_preprocess
from tests.test_cli import assert_clean_error, run_cli

pytest.importorskip("cryptography")

CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"


@pytest.fixture
def signed(tmp_path):
    """A copy of the fixtures signed by a fresh key: (cassette, signature, public key)."""
    cassette = tmp_path / "run.oscas"
    shutil.copyfile(CASSETTE, cassette)
    key = tmp_path / "lab.pem"
    proc = run_cli("cassette", "keygen", str(key))
    assert proc.returncode == 0, proc.stderr.decode()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    proc = run_cli("cassette", "sign", str(cassette), "--key", str(key))
    assert proc.returncode == 0, proc.stderr.decode()
    signature = tmp_path / "run.oscas.sig"
    assert signature.read_text().splitlines()[0] == str(content_digest(CASSETTE))
    return cassette, signature, tmp_path / "lab.pub.pem"


def test_a_signed_cassette_verifies(signed):
    cassette, signature, public = signed
    proc = run_cli(
        "cassette", "verify", str(cassette), "--signature", str(signature), "--public-key",
        str(public),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    assert f"content digest matches, signed by the key in {public}" in proc.stdout.decode()


def test_an_edited_cassette_fails_its_signature(signed, tmp_path):
    cassette, signature, public = signed
    index, exchange = _first_preprocess()
    flipped = exchange.text.replace('"supported":true', '"supported":false', 1)
    cassette.unlink()
    _copy_with(cassette, {index: replace(exchange.completion, text=flipped)})
    proc = run_cli(
        "cassette", "verify", str(cassette), "--signature", str(signature), "--public-key",
        str(public),
    )  # fmt: skip
    assert_clean_error(proc, 6, "CONTENT DIFFERS")


def test_another_key_or_an_edited_signature_is_refused(signed, tmp_path):
    cassette, signature, _public = signed
    other = tmp_path / "other.pem"
    run_cli("cassette", "keygen", str(other))
    args = ["cassette", "verify", str(cassette), "--signature", str(signature)]
    proc = run_cli(*args, "--public-key", str(tmp_path / "other.pub.pem"))
    assert_clean_error(proc, 6, "BAD SIGNATURE")
    digest, line = signature.read_text().splitlines()
    forged = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    signature.write_text(f"{forged}\n{line}\n")  # claims another digest with the same bytes
    proc = run_cli(*args, "--public-key", str(tmp_path / "lab.pub.pem"))
    assert_clean_error(proc, 6, "BAD SIGNATURE")


def test_signing_mistakes_are_one_line(signed, tmp_path):
    cassette, signature, public = signed
    assert_clean_error(run_cli("cassette", "keygen", str(tmp_path / "lab.pem")), 2, "exists")
    proc = run_cli("cassette", "sign", str(cassette), "--key", str(public))
    assert_clean_error(proc, 2, "not a PEM key")
    proc = run_cli("cassette", "verify", str(cassette), "--signature", str(signature))
    assert_clean_error(proc, 2, "go together")
    proc = run_cli(
        "cassette", "verify", str(cassette), "--signature", str(cassette), "--public-key",
        str(public),
    )  # fmt: skip
    assert_clean_error(proc, 2, "not a signature file")
