"""Explaining a replay miss: which recorded exchange is closest, and what differs."""

from __future__ import annotations

from pathlib import Path

from offline_scorer.cassette.key import KeyParts
from offline_scorer.cassette.records import Exchange, from_payload
from offline_scorer.cassette.store.container import CassetteFile

CONTEXT = 30


def _first_difference(recorded: str, requested: str) -> int:
    limit = min(len(recorded), len(requested))
    for index in range(limit):
        if recorded[index] != requested[index]:
            return index
    return limit


def _excerpt(text: str, at: int) -> str:
    start = max(0, at - CONTEXT)
    piece = text[start : at + CONTEXT].replace("\n", "\\n")
    return ("..." if start else "") + piece + ("..." if at + CONTEXT < len(text) else "")


def _text_diff(label: str, recorded: str, requested: str) -> str:
    at = _first_difference(recorded, requested)
    return (
        f"{label} first differs at character {at}: recorded {_excerpt(recorded, at)!r} "
        f"vs now {_excerpt(requested, at)!r}"
    )


def differences(recorded: KeyParts, requested: KeyParts) -> list[str]:
    """Human-readable differences between two keys' parts, most telling first."""
    out = []
    if recorded.key_format != requested.key_format:
        out.append(f"key format: recorded {recorded.key_format} vs now {requested.key_format}")
    if recorded.model_sha256 != requested.model_sha256:
        out.append(
            f"model: recorded sha256 {recorded.model_sha256[:16]}... vs now "
            f"{requested.model_sha256[:16]}..."
        )
    if recorded.chat_template_sha256 != requested.chat_template_sha256:
        out.append(
            f"chat template: recorded sha256 {recorded.chat_template_sha256[:16]}... vs "
            f"now {requested.chat_template_sha256[:16]}..."
        )
    if recorded.backend != requested.backend:
        out.append(f"backend: recorded {recorded.backend!r} vs now {requested.backend!r}")
    if recorded.verdict_threshold != requested.verdict_threshold:
        out.append(
            f"verdict threshold: recorded {recorded.verdict_threshold!r} vs now "
            f"{requested.verdict_threshold!r}"
        )
    if recorded.messages != requested.messages:
        if len(recorded.messages) != len(requested.messages):
            out.append(
                f"prompt: recorded {len(recorded.messages)} messages vs now "
                f"{len(requested.messages)}"
            )
        else:
            for index, (old, new) in enumerate(
                zip(recorded.messages, requested.messages, strict=True)
            ):
                if old != new:
                    label = f"prompt: message {index + 1} ({new[0]})"
                    if old[0] != new[0]:
                        out.append(f"{label}: role recorded {old[0]!r} vs now {new[0]!r}")
                    else:
                        out.append(_text_diff(label, old[1], new[1]))
                    break
    if recorded.sampling != requested.sampling:
        before, after = dict(recorded.sampling), dict(requested.sampling)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        out.append(
            "settings: "
            + ", ".join(f"{k} recorded {before.get(k)!r} vs now {after.get(k)!r}" for k in changed)
        )
    if recorded.grammar != requested.grammar:
        out.append(_text_diff("grammar", recorded.grammar or "", requested.grammar or ""))
    return out


def _closeness(recorded: KeyParts, requested: KeyParts) -> tuple[int, int]:
    prompt_old = "\n".join(c for _, c in recorded.messages)
    prompt_new = "\n".join(c for _, c in requested.messages)
    return (len(differences(recorded, requested)), -_first_difference(prompt_old, prompt_new))


def describe_miss(cassette: CassetteFile, step: str, requested: KeyParts) -> str:
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
