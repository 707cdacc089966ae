"""Every format and revision number the package writes into its files and keys, in one place.

Each constant versions something that outlives a process: bytes on disk, or a string inside a
cassette key. They are bumped by hand, and a bump changes what old files mean (a key no longer
matches, a reader refuses a file), so they are kept here together, each with what it versions
and when to bump it, instead of beside the code that happens to use them. Nothing here may
change value without a reason in the commit: the committed cassettes, results files and goldens
replay to their very bytes only while these stay as they are.

This module sits at the bottom layer (it imports nothing), so the storage, the backends, the
batch layer and the scorers can all import from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

__all__ = [
    "CASSETTE_FORMAT",
    "DIGEST_VERSION",
    "FORMAT_1_KIND",
    "GBNF_COMPILER",
    "KEY_FORMAT",
    "LEGACY_KEY_FORMAT",
    "LLAMA_CPP_BACKEND_ID",
    "LLAMA_CPP_DECODER",
    "LLAMA_CPP_FORMER_IDS",
    "OUTLINES_BACKEND_ID",
    "OUTLINES_DECODER",
    "OUTLINES_FORMER_IDS",
    "OUTLINES_SCHEMA_REWRITER",
    "RECORDED_BACKEND_IDS",
    "RESULTS_FORMAT",
    "RESULTS_READ_FORMATS",
    "SUMMARIZATION_REQUESTS_REVISION",
    "SUMMARIZATION_SHOWN_REVISION",
    "format_1_line",
]

# -- Cassette files ------------------------------------------------------------------------

CASSETTE_FORMAT = 1
"""The cassette container's byte layout (magic, frames, header map; docs/cassette-format.md),
written into every header. A reader refuses any other version, so bump it only with a change
to the framing itself, never for what the exchange maps hold (that is `KEY_FORMAT`)."""

KEY_FORMAT = 3
"""The key format new records get: which fields an exchange key digests. Format 2 added the
verdict threshold, format 3 replaced the grammar text by the output schema."""

LEGACY_KEY_FORMAT = 2
"""The one older key format `cassette upgrade` converts from (format 1 recorded no verdict
probabilities, so it cannot be upgraded)."""

DIGEST_VERSION = 1
"""The cassette content digest (`oscas-content-v1:sha256:...`, what a paper cites): how the
exchanges are walked and hashed. Bump it with any change to what the digest covers."""

# -- Backend ids (in every cassette key) ---------------------------------------------------

GBNF_COMPILER = "schema-gbnf/1"
"""Our JSON schema -> GBNF compiler (`backends.llama_cpp.gbnf`), in the llama_cpp backend's
id. Bump it with any change to the text `schema_to_gbnf` gives for some schema: recorded answers
were decoded under the old text and must not replay for the new one."""

LLAMA_CPP_DECODER = (
    "llguidance-gbnf/greedy-argmax+forced-batch+verdict-threshold+free-text-guard"
    "+contents-as-text/3"
)
"""The llama_cpp backend's decoding method: GBNF grammars run by llguidance, greedy argmax over
the masked logits, grammar-forced tokens evaluated as one batch; since /2, boolean verdicts
committed by P(true) against the threshold and free text kept by the loop/copy guard; since /3,
message contents tokenized as text, never as the control tokens they may spell
(prompt_tokens.py). Bump it with any change to how an answer is decoded."""

LLAMA_CPP_BACKEND_ID = f"{LLAMA_CPP_DECODER} {GBNF_COMPILER}"
"""What the llama_cpp backend's records are keyed under: the decoder, then after a space the
compiler that turns a request's schema into GBNF (keys hold the schema, so a change to the
grammar a schema compiles to must change this id). Replay needs it without the runtime."""

_LLAMA_CPP_DECODER_2 = (
    "llguidance-gbnf/greedy-argmax+forced-batch+verdict-threshold+free-text-guard/2"
)
LLAMA_CPP_FORMER_IDS = (
    f"{_LLAMA_CPP_DECODER_2} {GBNF_COMPILER}",
    _LLAMA_CPP_DECODER_2,
    "llguidance-gbnf/greedy-argmax+forced-batch/1",
)
"""The ids former llama_cpp decoders recorded under, newest first, so their cassettes keep
replaying: the /2 decoder under key format 3; key formats 1 and 2 held the grammar text itself,
so their ids named the decoder alone. Every former decoder parsed control-token text in
contents, so a record of one stands for today's answer only if its prompt holds none."""

OUTLINES_SCHEMA_REWRITER = "outlines-schema/1"
"""Our rewrite of request schemas for outlines (`backends.outlines.schema.for_outlines`), in the
outlines backend's id. Bump it with any change to what `for_outlines` gives for some schema."""

OUTLINES_DECODER = "outlines-llamacpp/llguidance-json-schema/greedy+contents-as-text-or-refused/2"
"""The outlines backend's decoding: no verdict threshold and no free-text guard; since /2, a
request whose contents hold control-token text is refused (outlines hands llama.cpp the prompt
as one string, parsed for control tokens). Outlines' own schema compiler comes with its runtime,
whose versions each record keeps beside its key."""

OUTLINES_BACKEND_ID = f"{OUTLINES_DECODER} {OUTLINES_SCHEMA_REWRITER}"
"""What the outlines backend's records are keyed under: the decoder, then the schema rewrite."""

_OUTLINES_DECODER_1 = "outlines-llamacpp/llguidance-json-schema/greedy/1"
OUTLINES_FORMER_IDS = (f"{_OUTLINES_DECODER_1} {OUTLINES_SCHEMA_REWRITER}", _OUTLINES_DECODER_1)
"""The ids former outlines decoders recorded under, newest first: the /1 decoder under key
format 3; key format 2 held the llama_cpp backend's grammar text, so the id named the decoder
alone."""

RECORDED_BACKEND_IDS: dict[str, tuple[str, ...]] = {
    "llama_cpp": (LLAMA_CPP_BACKEND_ID, *LLAMA_CPP_FORMER_IDS),
    "outlines": (OUTLINES_BACKEND_ID, *OUTLINES_FORMER_IDS),
}
"""Every id each built-in backend has keyed records under, current first: a replay answers
under the id its recording's recipe names when the backend is listed with it here, and
`offline-scorer migrate` traces a record without a recipe to its backend by it. A plugin
backend has recorded only under its own `backend_id`."""

# -- Results files -------------------------------------------------------------------------

RESULTS_FORMAT: Literal[3] = 3
"""The `eval` results file format written now (each line's "format" field). Format 3 opens with
a header line holding the run's recipe (`RecordedRecipe`), then one line per item shaped as in
format 2; format 2 had no header; a line without "format" is format 1. Readers take 3, 2 and
1, so bump it with any change to a line's fields or to the header."""

RESULTS_READ_FORMATS = (RESULTS_FORMAT, 2)
"""The results line formats read as they are; a line without "format" is format 1
(`format_1_line`). `report` reads all three; `reproduce` and `--resume` only a file with a
header (format 3): `offline-scorer migrate results` gives a format 2 file one."""

FORMAT_1_KIND = "summarization"
"""The scorer kind of every format 1 line (offline-scorer 0.2 had one kind and named none)."""


def format_1_line(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """A format 1 line in format 2's shape (None: it lacks "score" or "limiting_axis", so it
    is no format 1 line). Format 1 put the axes flat between "score" and "limiting_axis"
    (lines were written in a fixed key order) and had no "scorer" key."""
    keys = list(record)
    if "score" not in record or "limiting_axis" not in record:
        return None
    axes = keys[keys.index("score") + 1 : keys.index("limiting_axis")]
    shaped: dict[str, Any] = {"scorer": FORMAT_1_KIND}
    shaped.update((key, record[key]) for key in keys if key not in axes)
    shaped["axes"] = {axis: record[axis] for axis in axes}
    shaped.setdefault("metadata", {})  # lines from before rows kept their extra fields
    return shaped


# -- Scorer identities (in every results line's digest) -----------------------------------

SUMMARIZATION_SHOWN_REVISION = 1
"""Which of the judge's texts the summarization scorer shows a person, revision by revision:
the checks a reason, a quote or an explanation must pass (`reason_checks.REASON_CHECKS`,
`evidence.QUOTE_CHECKS`, `explanation_checks.EXPLANATION_CHECKS`) and the vetting-only word
lists they read. It enters the scorer's identity and a recording's recipe as "shown" once it is
above 1 (revision 1 is what every digest made before the field existed states), so after a bump
`--resume` scores again the lines whose texts today's rules could replace, and `reproduce`
names the revision. Bump it with any change to those rules that changes a shown text."""

SUMMARIZATION_REQUESTS_REVISION = 2
"""What the summarization scorer's request builders send, revision by revision; it enters the
scorer's `identity()` (the "requests" field), so `--resume` re-scores lines an earlier revision
made and `reproduce` names the digest as what differs. 1: each verdict's reason beside it; 2: in
the "sentences" style every verdict before any reason. Bump it with any change to a request's
messages or schema that the judge's backend id does not already cover."""
