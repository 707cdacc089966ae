"""`cassette upgrade`: a cassette of an older key format, or of a former version of its
backend, re-keyed to the current key and backend.

A format-2 key holds the GBNF text a schema compiled to, and a grammar cannot be turned back
into its schema, so no record can be converted from the record alone. Instead the scorer runs
again over the data the cassette was recorded from, with a judge that answers each request
from the old cassette by the key it had there (format 2: the legacy grammar and the backend's
former id; format 3: the backend's former id; or the current key, so upgrading twice changes
nothing) and hands every exchange to a recorder, exactly as a live judge's exchanges reach it.
The new file therefore holds what a live re-recording of the same exchanges would write, byte
for byte: same order, same blobs, same response and meta.

A record made by a former version of the backend is carried over only where it still stands for
today's answer (`decoders.earlier_record_problem`); an item with a record that does not is left
out and named, to be recorded live.

It knows no scorer kind: the caller passes `make_scorer`, and the data as items.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.assembly.migrate.decoders import earlier_ids, earlier_record_problem
from offline_scorer.assembly.open import require_pinned, resolve
from offline_scorer.backends import Backend
from offline_scorer.backends.llama_cpp.gbnf import request_grammar
from offline_scorer.batch.datasets import DataItem, Item
from offline_scorer.cassette.judge import CassetteJudge, Recorded
from offline_scorer.cassette.key import KeyParts, key_parts
from offline_scorer.cassette.miss import closest_difference, old_format
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.cassette.records import from_payload, response_completion
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import (
    CassetteFileError,
    CassetteMissError,
    InputError,
    OfflineScorerError,
)
from offline_scorer.files import temp_name
from offline_scorer.formats import KEY_FORMAT, LEGACY_KEY_FORMAT
from offline_scorer.judging.protocol import (
    Completion,
    Judge,
    JudgeBase,
    JudgeIdentity,
    JudgeRequest,
)
from offline_scorer.scorers.protocol import Scorer

__all__ = ["UpgradeReport", "upgrade_cassette"]


@dataclass(frozen=True)
class UpgradeReport:
    converted: int
    """Exchanges written to the new cassette."""
    failed_items: int
    """Items whose scoring failed on a recorded answer, as it did when it was recorded."""
    skipped_items: int
    """Rows that could not be read, or have no output: no request, as in a live run."""
    unreached: Mapping[str, int]
    """Records of the old cassette no request asked for, by step (in step order of the file)."""
    not_carried: tuple[tuple[str, str], ...] = ()
    """(item id, why) for items with a record a former backend made that no longer stands for
    today's answer: left out, to be recorded live."""


@dataclass(frozen=True)
class _OldIds:
    """The backend's former ids that the old cassette's records name, by key format."""

    legacy: tuple[str, ...]  # in format-2 records
    former: tuple[str, ...]  # in current-format records


def _old_ids(old: CassetteFile, backend: Backend) -> _OldIds:
    """The former ids the old cassette's records name, after checking that it holds something
    this backend can upgrade."""
    formats: Counter[int] = Counter()
    ids: dict[int, set[str]] = {LEGACY_KEY_FORMAT: set(), KEY_FORMAT: set()}
    for key, payload in old.iter_exchanges():
        parts = from_payload(old, key, payload).parts
        formats[parts.key_format] += 1
        ids.get(parts.key_format, set()).add(parts.backend)
    path = Path(old.path)
    if not formats:
        raise CassetteFileError(f"{path} holds no exchanges; there is nothing to upgrade")
    if set(formats) == {1}:
        raise CassetteFileError(str(old_format(path, 1)))
    earlier = earlier_ids(backend)
    legacy = tuple(former for former in earlier if former in ids[LEGACY_KEY_FORMAT])
    former = tuple(former for former in earlier if former in ids[KEY_FORMAT])
    named = ids[LEGACY_KEY_FORMAT] | ids[KEY_FORMAT]
    if named and not legacy and not former and backend.backend_id not in named:
        raise CassetteFileError(
            f"{path} was not recorded by the {backend.name} backend (its records name "
            f"{', '.join(sorted(named))}); upgrade it with the backend it was recorded with"
        )
    return _OldIds(legacy, former)


class _NotCarried(OfflineScorerError):
    """A record of a former backend that no longer stands for today's answer."""


class _CannotCheck(Exception):
    """Why a former backend's record could not be checked (no vocabulary, no runtime): it ends
    the upgrade with that one-line error rather than counting as the item's failure."""

    def __init__(self, error: OfflineScorerError) -> None:
        super().__init__(str(error))
        self.error = error


class _FromOld(JudgeBase):
    """Answers from the old cassette by each request's old key; records under its new one."""

    def __init__(
        self,
        old: CassetteFile,
        identity: JudgeIdentity,
        ids: _OldIds,
        recorder: CassetteJudge,
        problem: Callable[[JudgeRequest], str | None],
    ) -> None:
        self.old = old
        self._identity = identity
        self.ids = ids
        self.recorder = recorder
        self.problem = problem  # why a former backend's record does not stand (None: it does)
        self.reached: set[bytes] = set()

    @property
    def identity(self) -> JudgeIdentity:
        return self._identity

    def _candidates(self, request: JudgeRequest, parts: KeyParts) -> Iterator[KeyParts]:
        """The keys the request may have been recorded under, current format first."""
        yield parts
        for former in self.ids.former:
            yield dataclasses.replace(parts, backend=former)
        if self.ids.legacy:  # format 2 held the grammar text the llama.cpp backend compiled
            grammar = request_grammar(request.output_schema)
            for former in self.ids.legacy:
                yield dataclasses.replace(
                    parts,
                    key_format=LEGACY_KEY_FORMAT,
                    backend=former,
                    grammar=grammar,
                    schema=None,
                )

    def _find(self, request: JudgeRequest) -> tuple[bytes, dict[str, object]]:
        """The key and record that answer `request` in the old cassette; a miss says why not,
        and a former backend's record that no longer stands is `_NotCarried`."""
        parts = key_parts(request, self._identity)
        last = parts
        for candidate in self._candidates(request, parts):
            key = candidate.digest()
            payload = self.old.get_exchange(key)
            if payload is not None:
                if candidate.backend != parts.backend:
                    try:
                        why = self.problem(request)
                    except OfflineScorerError as error:
                        raise _CannotCheck(error) from None
                    if why is not None:
                        self.reached.add(key)  # reached, and deliberately not carried over
                        raise _NotCarried(f"its {request.step!r} record: {why}")
                return key, payload
            last = candidate
        why, _ = closest_difference(self.old, request.step, last)
        raise CassetteMissError(f"no answer to its {request.step!r} request: {why}")

    def complete(self, request: JudgeRequest) -> Completion:
        key, payload = self._find(request)
        self.reached.add(key)
        threshold = self._identity.verdict_threshold
        completion = response_completion(self.old, key, payload, threshold)
        meta = payload.get("meta")
        self.recorder.record(
            Recorded(request, completion, meta if isinstance(meta, Mapping) else {})
        )
        return completion


def _check_paths(old: Path, new: Path, overwrite: bool) -> None:
    if not old.is_file():
        raise InputError(f"no such cassette: {old}")
    if new.exists() and new.resolve() == old.resolve():
        raise InputError(f"--out {new} is the cassette being upgraded; write a new file")
    if new.exists() and not overwrite:
        raise InputError(f"{new} exists; pass --overwrite to replace it")


def upgrade_cassette(
    old: Path,
    new: Path,
    items: Iterable[Item],
    make_scorer: Callable[[Judge], Scorer],
    *,
    model: str | None = None,
    backend: str | None = None,
    overwrite: bool = False,
) -> UpgradeReport:
    """Score `items` with answers from `old`, recording each exchange into `new`.

    `new` appears only when every item was answered (it is written beside it first), so a
    failed upgrade leaves an existing file as it was. A request `old` cannot answer is a
    CassetteMissError naming the item and what differs from the closest record.
    """
    _check_paths(old, new, overwrite)
    spec, chosen = resolve(model, backend)
    identity = require_pinned(spec, chosen, "upgrade")
    scratch = temp_name(new)
    try:
        with CassetteFile(old, create=False) as source:
            ids = _old_ids(source, chosen)
            # the new file keeps the recipe the old one's header carries
            CassetteFile(scratch, create=True, recipe=source.recipe).close()
            recorder = CassetteJudge(scratch, mode=RecordMode.RECORD, identity=identity)
            with recorder:
                judge = _FromOld(
                    source,
                    identity,
                    ids,
                    recorder,
                    lambda request: earlier_record_problem(chosen, spec, request),
                )
                try:
                    failed, skipped, not_carried = _score(items, make_scorer(judge), old)
                except _CannotCheck as stop:
                    raise stop.error from None
            unreached = Counter(
                str(payload.get("step"))
                for key, payload in source.iter_exchanges()
                if key not in judge.reached
            )
        os.replace(scratch, new)
    finally:
        scratch.unlink(missing_ok=True)
    return UpgradeReport(recorder.recorded, failed, skipped, dict(unreached), not_carried)


def _score(
    items: Iterable[Item], scorer: Scorer, old: Path
) -> tuple[int, int, tuple[tuple[str, str], ...]]:
    """(failed, skipped, not carried over) items; what fails on a recorded answer failed the
    same way live."""
    failed = skipped = 0
    not_carried: list[tuple[str, str]] = []
    for item in items:
        if not isinstance(item, DataItem) or not item.has_output:
            skipped += 1
            continue
        run: dict[str, Any] = {"input": item.input, "output": item.output}
        try:
            scorer.run(run)
        except _NotCarried as why:
            not_carried.append((item.id, str(why)))
        except CassetteMissError as miss:
            where = f"item {item.id!r}" + (f" (line {item.line})" if item.line else "")
            raise CassetteMissError(
                f"cannot upgrade {old}: {where} has {miss}; give the data, scorer options, "
                "model and backend it was recorded with"
            ) from None
        except OfflineScorerError:
            failed += 1
    return failed, skipped, tuple(not_carried)
