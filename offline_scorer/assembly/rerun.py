"""`cassette verify --live`: every recorded exchange re-run live on the backend that recorded it.

A current record holds everything its answer depended on: the messages, the sampling settings,
the output schema (key format 3), and the model, chat template, backend and verdict threshold
of the judge. So the request is rebuilt from the record alone and sent to a live judge opened
through the backend whose id (now or in a former version) the record names, for the registered
model with the record's sha256 and the record's threshold. A record made by an older backend
version is reported as drift rather than re-run on the new one: its answer is not expected to
come back the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from offline_scorer.assembly.open import load_live
from offline_scorer.backends import LoadOptions, backend_for_id
from offline_scorer.cassette.fields import sampling_settings
from offline_scorer.cassette.key import KEY_FORMAT
from offline_scorer.cassette.miss import identity_differences
from offline_scorer.cassette.records import Exchange
from offline_scorer.errors import ConfigError
from offline_scorer.judging.protocol import Judge, JudgeRequest, Message
from offline_scorer.models.registry import ModelSpec, load_registry

__all__ = ["RerunReport", "rebuild_request", "rerun_exchanges"]


@dataclass
class RerunReport:
    same: int = 0
    """Exchanges whose text (and verdict probabilities, if recorded) came back identical."""
    drifted: list[str] = field(default_factory=list)
    """One line per exchange that did not, or could not be re-run, saying why."""


def rebuild_request(exchange: Exchange) -> JudgeRequest:
    """The request a current-format record was answered for, as the scorer built it."""
    parts = exchange.parts
    schema = None if parts.schema is None else json.loads(parts.schema)  # key order kept
    return JudgeRequest(
        step=exchange.step,
        messages=tuple(Message(role, content) for role, content in parts.messages),
        output_schema=schema,
        sampling=sampling_settings(parts.sampling),
    )


class _Judges:
    """One live judge per backend, model and threshold, loaded when first needed."""

    def __init__(self, threads: int | None) -> None:
        self.options = LoadOptions(threads=threads)
        self.models = {spec.sha256: spec for spec in load_registry().models.values() if spec.sha256}
        self.loaded: dict[tuple[str, str, float | None], Judge] = {}

    def for_record(self, exchange: Exchange) -> Judge:
        """The judge to re-run `exchange` on; ConfigError (one line) if there is none."""
        parts = exchange.parts
        spec: ModelSpec | None = self.models.get(parts.model_sha256)
        if spec is None:
            raise ConfigError(f"model {parts.model_sha256[:12]} is not in the registry")
        backend = backend_for_id(parts.backend)
        threshold = parts.verdict_threshold
        if threshold is not None:
            spec = spec.model_copy(update={"verdict_threshold": threshold})
        slot = (backend.name, spec.name, threshold)
        if slot not in self.loaded:
            self.loaded[slot] = load_live(backend, spec, self.options)
        return self.loaded[slot]

    def close(self) -> None:
        for judge in self.loaded.values():
            judge.close()


def _compare(exchange: Exchange, judge: Judge) -> str | None:
    """None when the live answer is the recorded one, else how it differs."""
    completion = judge.complete(rebuild_request(exchange))
    text, recorded = completion.text, exchange.text
    recorded_p = exchange.completion.verdict_probabilities
    if text == recorded:
        if recorded_p is None or completion.verdict_probabilities == recorded_p:
            return None
        return "same text, different verdict probabilities"
    at = next(
        (i for i, (a, b) in enumerate(zip(text, recorded, strict=False)) if a != b),
        min(len(text), len(recorded)),
    )
    return f"differs from character {at}"


def rerun_exchanges(exchanges: Iterable[Exchange], threads: int | None = None) -> RerunReport:
    """Re-run each exchange live and say which came back byte-identical."""
    report = RerunReport()
    judges = _Judges(threads)
    try:
        for exchange in exchanges:
            label = f"{exchange.key.hex()[:12]} {exchange.step}"
            if exchange.parts.key_format != KEY_FORMAT:
                report.drifted.append(
                    f"{label}: recorded under key format {exchange.parts.key_format}, which "
                    "keeps no output schema to re-run; convert the cassette with "
                    "`offline-scorer cassette upgrade` (format 2) or re-record it"
                )
                continue
            try:
                judge = judges.for_record(exchange)
            except ConfigError as error:
                report.drifted.append(f"{label}: {error}")
                continue
            identity = judge.identity
            changed = [] if identity is None else identity_differences(exchange.parts, identity)
            problem = "; ".join(changed) if changed else _compare(exchange, judge)
            if problem is None:
                report.same += 1
            else:
                report.drifted.append(f"{label}: {problem}")
    finally:
        judges.close()
    return report
