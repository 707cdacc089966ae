"""`cassette verify --live`: every recorded exchange re-run live on the backend that recorded it.

A current record holds everything its answer depended on: the messages, the sampling settings,
the output schema (key format 3), and the model, chat template, backend and verdict threshold
of the judge. So the request is rebuilt from the record alone and sent to a live judge opened
through the backend whose id (today's, or an earlier decoder's) the record names, for the
registered model with the record's sha256 and the record's threshold. A record of an earlier
decoder is re-run on the current one only where the answer still stands
(`migrate.decoders.earlier_record_problem`: for the llama_cpp decoder /2, a prompt with no
control-token text); otherwise it is reported as drift with the reason, since its answer is not
expected to come back the same.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from offline_scorer.assembly.migrate.decoders import (
    backend_recording,
    earlier_ids,
    earlier_record_problem,
)
from offline_scorer.assembly.open import load_live
from offline_scorer.backends import LoadOptions
from offline_scorer.cassette.fields import sampling_settings
from offline_scorer.cassette.miss import identity_differences
from offline_scorer.cassette.records import Exchange
from offline_scorer.errors import ConfigError, OfflineScorerError
from offline_scorer.formats import KEY_FORMAT
from offline_scorer.judging.protocol import (
    Completion,
    Judge,
    JudgeIdentity,
    JudgeRequest,
    Message,
)
from offline_scorer.models.registry import ModelSpec, load_registry

__all__ = [
    "Comparison",
    "RerunReport",
    "compare",
    "rebuild_request",
    "rerun_exchanges",
    "sample",
    "verdicts",
]


T = TypeVar("T")


@dataclass
class RerunReport:
    """What re-running recorded exchanges live showed: how many came back the same, and how far
    the others moved."""

    same: int = 0
    """Exchanges whose text (and verdict probabilities, if recorded) came back identical."""
    drifted: list[str] = field(default_factory=list)
    """One line per exchange that did not, or could not be re-run, saying why."""
    compared: int = 0
    """Exchanges re-run and compared (those that could not be re-run are only in `drifted`)."""
    same_text: int = 0
    """Of them, those whose text came back byte-identical."""
    same_verdicts: int = 0
    """Of them, those whose boolean verdicts (every true/false of the answer, in order) held."""
    largest_change: float = 0.0
    """The largest change of a recorded verdict probability, over every exchange compared."""
    largest_at: str | None = None
    """Which exchange (key prefix and step) had it."""
    unmatched: int = 0
    """Live requests no record answers (re-scoring items: an earlier answer of the item
    drifted, so the scorer asked something the recording never saw)."""

    def add(self, label: str, comparison: Comparison) -> None:
        self.compared += 1
        self.same_text += comparison.same_text
        self.same_verdicts += comparison.same_verdicts
        if comparison.probability_change > self.largest_change:
            self.largest_change, self.largest_at = comparison.probability_change, label
        if comparison.problem is None:
            self.same += 1
        else:
            self.drifted.append(f"{label}: {comparison.problem}")


@dataclass(frozen=True)
class Comparison:
    """One live answer against its record."""

    same_text: bool
    same_verdicts: bool
    probability_change: float  # largest |live - recorded| over the verdicts; 0 if none recorded
    problem: str | None  # None when text and probabilities are identical


def verdicts(text: str) -> tuple[bool, ...]:
    """The answer's boolean verdicts in document order (what verdict probabilities follow);
    none for an answer that is not JSON (a free-text reason)."""
    try:
        value = json.loads(text)
    except ValueError:
        return ()
    found: list[bool] = []

    def walk(node: Any) -> None:
        if isinstance(node, bool):
            found.append(node)
        elif isinstance(node, dict):
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(value)
    return tuple(found)


def compare(exchange: Exchange, completion: Completion) -> Comparison:
    """How a live answer differs from the recorded one."""
    text, recorded = completion.text, exchange.text
    recorded_p = exchange.completion.verdict_probabilities
    live_p = completion.verdict_probabilities
    change = 0.0
    if recorded_p is not None and live_p is not None and len(recorded_p) == len(live_p):
        change = max((abs(a - b) for a, b in zip(live_p, recorded_p, strict=True)), default=0.0)
    same_verdicts = verdicts(text) == verdicts(recorded)
    if text == recorded:
        if recorded_p is None or live_p == recorded_p:
            return Comparison(True, True, change, None)
        return Comparison(True, True, change, "same text, different verdict probabilities")
    at = next(
        (i for i, (a, b) in enumerate(zip(text, recorded, strict=False)) if a != b),
        min(len(text), len(recorded)),
    )
    return Comparison(False, same_verdicts, change, f"differs from character {at}")


def sample(population: Sequence[T], count: int | None) -> list[T]:
    """`count` of `population` spread evenly over it (all when None or more than there are):
    deterministic, so two machines re-run the same sample."""
    if count is None or count >= len(population):
        return list(population)
    return [population[i * len(population) // count] for i in range(count)]


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

    def spec_for(self, exchange: Exchange) -> ModelSpec:
        spec: ModelSpec | None = self.models.get(exchange.parts.model_sha256)
        if spec is None:
            raise ConfigError(f"model {exchange.parts.model_sha256[:12]} is not in the registry")
        return spec

    def earlier_problem(self, exchange: Exchange, request: JudgeRequest) -> str | None:
        """Why a record of an earlier decoder of its backend may not come back the same from
        the current one (None: it should)."""
        backend = backend_recording(exchange.parts.backend)
        return earlier_record_problem(backend, self.spec_for(exchange), request)

    def for_record(self, exchange: Exchange) -> Judge:
        """The judge to re-run `exchange` on; ConfigError (one line) if there is none."""
        parts = exchange.parts
        spec = self.spec_for(exchange)
        backend = backend_recording(parts.backend)
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


def _only_backend_differs(exchange: Exchange, identity: JudgeIdentity) -> bool:
    """Whether the record names an earlier id of the judge's backend and differs in nothing
    else of the identity."""
    backend = backend_recording(identity.backend)
    recorded = exchange.parts.backend
    if recorded == identity.backend or recorded not in earlier_ids(backend):
        return False
    return not identity_differences(exchange.parts, dataclasses.replace(identity, backend=recorded))


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
            request = rebuild_request(exchange)
            if changed and identity is not None and _only_backend_differs(exchange, identity):
                try:
                    why = judges.earlier_problem(exchange, request)
                except OfflineScorerError as error:
                    why = str(error)
                if why is not None:
                    changed = [f"recorded by an earlier decoder of the backend, and {why}"]
                else:
                    changed = []  # the same tokens, the same decoding: it should come back
            if changed:
                report.drifted.append(f"{label}: {'; '.join(changed)}")
                continue
            report.add(label, compare(exchange, judge.complete(request)))
    finally:
        judges.close()
    return report
