"""Ed25519 detached signatures of a cassette's content digest (optional: the `sign` extra).

A digest shows that the content is the published one; a signature shows who published that
digest. A lab signs the printed digest with its private key and publishes the signature file
beside the cassette and its public key; a reader checks both with `cassette verify
--signature`. The signed message is the text ``offline-scorer content digest\\n<digest>``
(the digest in its printed form, version included), so a signature can never be replayed as
the signature of anything else. Keys are PEM files (PKCS#8 private, SubjectPublicKeyInfo
public), readable by `openssl`. The signature file is two lines: the digest, then
``ed25519:<base64 signature>``.

The `cryptography` package does the signing; it is imported only here, and only when asked.
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import Any

from offline_scorer.errors import CassetteFileError, InputError
from offline_scorer.files import atomic_write_bytes, read_bytes

__all__ = ["generate_key", "read_signature", "sign_digest", "signature_text", "verify_signature"]

_CONTEXT = b"offline-scorer content digest\n"
_SCHEME = "ed25519:"


def _ed25519() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise InputError(
            "signing needs the 'sign' extra: pip install 'offline-scorer[sign]' (cryptography)"
        ) from None
    return ed25519


def _serialization() -> Any:
    from cryptography.hazmat.primitives import serialization

    return serialization


def generate_key(private: Path) -> Path:
    """Write a new private key to `private` (mode 0600) and its public key beside it
    (`NAME.pub.pem`); return the public key's path. Refuses to overwrite either."""
    ed25519, serialization = _ed25519(), _serialization()
    public = private.with_name(private.name.removesuffix(".pem") + ".pub.pem")
    for path in (private, public):
        if path.exists():
            raise InputError(f"{path} exists; choose another name (keys are never overwritten)")
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    atomic_write_bytes(public, public_pem)
    return public


def _load(path: Path, private: bool) -> Any:
    ed25519, serialization = _ed25519(), _serialization()
    data = read_bytes(path, "private key" if private else "public key")
    try:
        key = (
            serialization.load_pem_private_key(data, password=None)
            if private
            else serialization.load_pem_public_key(data)
        )
    except (ValueError, TypeError) as error:
        raise InputError(f"{path} is not a PEM key without a password: {error}") from None
    wanted = ed25519.Ed25519PrivateKey if private else ed25519.Ed25519PublicKey
    if not isinstance(key, wanted):
        raise InputError(f"{path} is not an Ed25519 key")
    return key


def sign_digest(digest: str, private_key: Path) -> bytes:
    """The Ed25519 signature of `digest` (its printed form) with the key at `private_key`."""
    signature: bytes = _load(private_key, private=True).sign(_CONTEXT + digest.encode("ascii"))
    return signature


def signature_text(digest: str, signature: bytes) -> str:
    """The signature file's text."""
    return f"{digest}\n{_SCHEME}{base64.b64encode(signature).decode('ascii')}\n"


def read_signature(path: Path) -> tuple[str, bytes]:
    """(digest, signature) from a signature file; InputError for one of another shape."""
    lines = read_bytes(path, "signature file").decode("ascii", "replace").split()
    if len(lines) != 2 or not lines[1].startswith(_SCHEME):
        raise InputError(f"{path} is not a signature file (a digest line, then {_SCHEME}...)")
    try:
        signature = base64.b64decode(lines[1].removeprefix(_SCHEME), validate=True)
    except binascii.Error:
        raise InputError(f"{path}: the signature is not base64") from None
    return lines[0], signature


def verify_signature(digest: str, signature: bytes, public_key: Path) -> None:
    """CassetteFileError (one line) unless `signature` is the key's signature of `digest`."""
    from cryptography.exceptions import InvalidSignature

    key = _load(public_key, private=False)
    try:
        key.verify(signature, _CONTEXT + digest.encode("ascii"))
    except InvalidSignature:
        raise CassetteFileError(
            f"BAD SIGNATURE: {digest} was not signed by the key in {public_key}"
        ) from None
