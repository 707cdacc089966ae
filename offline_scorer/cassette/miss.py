"""Explaining a replay miss: which recorded exchange is closest, and what differs.

The differences are worded by the key fields themselves (`fields.FIELDS`), in key order, so a
new key field is explained the moment it is added to the table.
"""

from __future__ import annotations

from pathlib import Path

from offline_scorer.cassette.fields import FIELDS, IdentityField, first_difference
from offline_scorer.cassette.key import KeyParts
from offline_scorer.cassette.records import Exchange, from_payload
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.judging.protocol import JudgeIdentity

__all__ = ["describe_miss", "differences", "identity_differences"]


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
        and field.since <= recorded.key_format
        and (old := getattr(recorded, field.name)) != (new := field.of(identity))
    ]


def _closeness(recorded: KeyParts, requested: KeyParts) -> tuple[int, int]:
    prompt_old = "\n".join(c for _, c in recorded.messages)
    prompt_new = "\n".join(c for _, c in requested.messages)
    return (len(differences(recorded, requested)), -first_difference(prompt_old, prompt_new))


def describe_miss(cassette: CassetteFile, step: str, requested: KeyParts) -> str:
    """The one-line message for a replay miss of `step` with these key parts."""
    path = Path(cassette.path)
    same_step: list[Exchange] = []
    for key, payload in cassette.iter_exchanges():
        if payload.get("step") == step:
            same_step.append(from_payload(cassette, key, payload))
    advice = "record it with --record-mode auto (or record)"
    if not same_step:
        return (
            f"replay miss for step {step!r}: {path} holds no {step!r} exchange "
            f"({cassette.exchange_count} exchanges in all); {advice}"
        )
    closest = min(same_step, key=lambda ex: _closeness(ex.parts, requested))
    if closest.parts.key_format != requested.key_format:
        return (
            f"replay miss for step {step!r}: {path} was recorded with cassette key format "
            f"{closest.parts.key_format}, and this version of offline-scorer replays format "
            f"{requested.key_format} (verdict probabilities and thresholds were added); "
            "re-record it with --record-mode record"
        )
    diffs = differences(closest.parts, requested)
    return (
        f"replay miss for step {step!r}: {path} has no exchange with this key; the closest "
        f"recorded {step!r} exchange ({closest.key.hex()[:12]}) differs in "
        + "; ".join(diffs)
        + f"; {advice}"
    )
