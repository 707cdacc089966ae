"""Cassettes: append-only recordings of model exchanges, replayable byte for byte.

Laid out like vcrpy: `modes` (record modes), `judge` (the recording/replaying judge), `fields`
(the one table of key fields), `key`, `records` and `miss` (all derived from that table), and
`store/` for the file format itself (codec, frames, file, salvage).
"""
