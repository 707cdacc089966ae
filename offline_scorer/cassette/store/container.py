"""The cassette container's public API in one import, for tools, benchmarks and tests.

The on-disk format (docs/cassette-format.md) is implemented by the modules beside this one:
`errors`, `codec` (payload type rules), `frames` (byte layout and integrity), `fs` (locks,
maps, durable writes), `file` (`CassetteFile`) and `salvage` (verify and repair). What the
exchange maps *mean* is left to the record layer above (`offline_scorer.cassette.records`).
"""

from __future__ import annotations

from offline_scorer.cassette.store.codec import MAX_DEPTH, blob_key
from offline_scorer.cassette.store.errors import (
    CassetteCorruptError,
    CassetteError,
    CassetteFormatError,
)
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.cassette.store.frames import (
    MAGIC,
    MARKER,
    MAX_PAYLOAD,
    OVERHEAD,
    default_writer,
    encode_blob,
    encode_exchange,
    encode_header,
)
from offline_scorer.cassette.store.salvage import RepairReport, VerifyReport, repair, verify
from offline_scorer.formats import CASSETTE_FORMAT

__all__ = [
    "CASSETTE_FORMAT",
    "MAGIC",
    "MARKER",
    "MAX_DEPTH",
    "MAX_PAYLOAD",
    "OVERHEAD",
    "CassetteCorruptError",
    "CassetteError",
    "CassetteFile",
    "CassetteFormatError",
    "RepairReport",
    "VerifyReport",
    "blob_key",
    "default_writer",
    "encode_blob",
    "encode_exchange",
    "encode_header",
    "repair",
    "verify",
]
