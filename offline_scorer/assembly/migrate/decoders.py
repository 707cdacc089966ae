"""Records made by an earlier decoder of a backend: which backend made them, under which id a
cassette without a recipe was recorded, and whether such a record still stands for what the
backend answers today.

The replay path knows none of this: it answers under the backend id a recording's recipe
names (`formats.RECORDED_BACKEND_IDS` says which ids a backend may answer under). What is
here serves the commands that bring old files forward (`migrate cassette`, `cassette upgrade`)
or re-run them (`cassette verify --live`), and the replay of a cassette made before recipes,
which names its decoder only in its keys.
"""

from __future__ import annotations

from pathlib import Path

from offline_scorer.assembly.migrate.vocabulary import control_text_problem
from offline_scorer.assembly.open import recorded_under, resolve
from offline_scorer.backends import Backend, backend_names, get_backend
from offline_scorer.cassette.records import from_payload
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import ConfigError
from offline_scorer.formats import KEY_FORMAT, RECORDED_BACKEND_IDS
from offline_scorer.judging.protocol import JudgeRequest
from offline_scorer.models.registry import ModelSpec

__all__ = [
    "backend_recording",
    "earlier_ids",
    "earlier_record_problem",
    "recorded_earlier_id",
    "replayed_id_of_file",
]


def earlier_ids(backend: Backend) -> tuple[str, ...]:
    """The ids the backend's earlier decoders keyed records under, newest first."""
    return tuple(i for i in RECORDED_BACKEND_IDS.get(backend.name, ()) if i != backend.backend_id)


def backend_recording(backend_id: str) -> Backend:
    """The installed backend that keys records under `backend_id` now or did with an earlier
    decoder; a one-line ConfigError naming the ids the installed backends know otherwise."""
    known = []
    for name in backend_names():
        backend = get_backend(name)
        if recorded_under(backend, backend_id):
            return backend
        known.append(f"{name} ({backend.backend_id})")
    raise ConfigError(
        f"no installed backend records under {backend_id!r}; installed: "
        + (", ".join(known) or "none")
    )


def earlier_record_problem(backend: Backend, spec: ModelSpec, request: JudgeRequest) -> str | None:
    """Why an answer an earlier decoder of `backend` recorded for `request` may differ from
    what it answers now (None: it would not), so `cassette upgrade` re-keys only records that
    still hold. Every earlier decoder of the built-in backends read control-token text in a
    message as control tokens; today's read it as text. Reads the model's vocabulary, never
    runs the model."""
    if not earlier_ids(backend):
        return None
    return control_text_problem(spec, request)


def recorded_earlier_id(cassette: CassetteFile, backend: Backend) -> str | None:
    """Which earlier id of `backend` the cassette was recorded under (None: its current id, or
    neither), read from the newest current-format record that names one: once a judge in
    `auto` mode has added records under the current id, those answer."""
    earlier = earlier_ids(backend)
    for key, payload in cassette.iter_exchanges(newest_first=True):
        parts = from_payload(cassette, key, payload).parts
        if parts.key_format != KEY_FORMAT:
            continue
        if parts.backend == backend.backend_id:
            return None
        if parts.backend in earlier:
            return parts.backend
    return None


def replayed_id_of_file(cassette: Path, model: str | None, backend: str | None) -> str | None:
    """For a cassette made before recipes: the earlier id of the judge's backend its records
    were made under (None: the current id, or none of its ids)."""
    chosen = resolve(model, backend)[1]
    with CassetteFile(cassette, create=False) as recorded:
        return recorded_earlier_id(recorded, chosen)
