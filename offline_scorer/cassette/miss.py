"""Explaining a replay miss: which recorded exchange is closest, and what differs.

The differences are worded by the key fields themselves (`fields.FIELDS`), in key order, so a
new key field is explained the moment it is added to the table.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from offline_scorer.cassette.fields import FIELDS, IdentityField, first_differing_char
from offline_scorer.cassette.key import KeyParts
from offline_scorer.cassette.records import Exchange, from_payload
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.formats import KEY_FORMAT
from offline_scorer.judging.protocol import JudgeIdentity
from offline_scorer.models.registry import load_registry

__all__ = [
    "closest_difference",
    "describe_miss",
    "differences",
    "identity_differences",
    "old_format",
]


def differences(recorded: KeyParts, requested: KeyParts) -> list[str]:
    """Human-readable differences between two keys' parts, most telling first."""
    return [
        field.diff(old, new)
        for field in FIELDS
        if (old := getattr(recorded, field.name)) != (new := getattr(requested, field.name))
    ]


def identity_differences(recorded: KeyParts, identity: JudgeIdentity) -> list[str]:
    """How a judge's identity differs from the one an exchange was recorded with.

    Only fields that are part of the recorded key's format count: a format 1 record says
    nothing about the verdict threshold.
    """
    return [
        field.diff(old, new)
        for field in FIELDS
        if isinstance(field, IdentityField)
        and field.in_format(recorded.key_format)
        and (old := getattr(recorded, field.name)) != (new := field.of(identity))
    ]


def _closeness(recorded: KeyParts, requested: KeyParts) -> tuple[int, int]:
    prompt_old = "\n".join(c for _, c in recorded.messages)
    prompt_new = "\n".join(c for _, c in requested.messages)
    return (len(differences(recorded, requested)), -first_differing_char(prompt_old, prompt_new))


def old_format(path: Path, key_format: int) -> str | None:
    """What to do with a cassette recorded under an older key format (None: current or newer).

    One clause, shared by replay misses and `cassette upgrade`, so both give the same advice.
    """
    if key_format == 1:
        return (
            f"{path} was recorded with cassette key format 1 (offline-scorer 0.1), which has no "
            "verdict probabilities and cannot be upgraded; re-record it with --record-mode record"
        )
    if key_format == 2:
        return (
            f"{path} was recorded with cassette key format 2, which keyed the llama.cpp grammar "
            f"text where format {KEY_FORMAT} keys the output schema; convert it with "
            f"{_upgrade_command(path)}, or re-record it with --record-mode record"
        )
    return None


def _upgrade_command(path: Path) -> str:
    """The `cassette upgrade` command that converts `path`, and what its DATA is."""
    return (
        f"`offline-scorer cassette upgrade {path} --data DATA.jsonl --out NEW.oscas` (DATA: the "
        "dataset it was recorded from, with the same options)"
    )


def closest_difference(cassette: CassetteFile, step: str, requested: KeyParts) -> tuple[str, bool]:
    """(why, settled): why `cassette` cannot answer `requested`, from the closest recorded
    `step` exchange (or that it holds none); `settled` when `why` already says what to do (an
    old key format), else callers (replay, upgrade) add their own advice."""
    path = Path(cassette.path)
    same_step: list[Exchange] = []
    for key, payload in cassette.iter_exchanges():
        if payload.get("step") == step:
            same_step.append(from_payload(cassette, key, payload))
    if not same_step:
        count = cassette.exchange_count
        return f"{path} holds no {step!r} exchange ({count} exchanges in all)", False
    closest = min(same_step, key=lambda ex: _closeness(ex.parts, requested))
    if closest.parts.key_format != requested.key_format:
        found = old_format(path, closest.parts.key_format)
        if found is not None:
            return found, True
    diffs = differences(closest.parts, requested)
    why = (
        f"{path} has no exchange with this key; the closest recorded {step!r} exchange "
        f"({closest.key.hex()[:12]}) differs in " + "; ".join(diffs)
    )
    if closest.parts.model_sha256 != requested.model_sha256:
        return _other_model(path, closest.parts.model_sha256) + "; " + why, True
    if dataclasses.replace(closest.parts, backend=requested.backend) == requested:
        return why + "; " + _other_backend(path), True
    return why, False


def _other_model(path: Path, recorded_sha256: str) -> str:
    """What to pass to replay a cassette recorded with another model: its registry name."""
    names = load_registry().names_pinning(recorded_sha256)
    if not names:
        return (
            f"{path} was recorded with a model this registry does not hold (sha256 "
            f"{recorded_sha256[:12]}): register that GGUF (docs/models.md) and pass --model"
        )
    return (
        f"{path} was recorded with model {names[0]!r}, not this one: replay with --model "
        f"{names[0]} (or with no --model, which takes the recording's)"
    )


def _other_backend(path: Path) -> str:
    return (
        "if it was recorded under another id of this backend (an earlier decoder), convert it with "
        f"{_upgrade_command(path)}, else record it with --record-mode auto (or record)"
    )


def describe_miss(cassette: CassetteFile, step: str, requested: KeyParts) -> str:
    """The one-line message for a replay miss of `step` with these key parts."""
    why, settled = closest_difference(cassette, step, requested)
    advice = "" if settled else "; record it with --record-mode auto (or record)"
    return f"replay miss for step {step!r}: {why}{advice}"
