"""The outlines backend: the same judge requests through outlines' llama.cpp integration and a
JSON-schema constraint. Optional (`pip install -e '.[outlines]'`); importing this package does
not import outlines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from offline_scorer.backends.outlines.schema import REWRITER, for_outlines

if TYPE_CHECKING:
    from offline_scorer.backends import LoadOptions
    from offline_scorer.backends.outlines.judge import OutlinesJudge
    from offline_scorer.models.registry import ModelSpec

# Enters cassette keys. No verdict threshold and no free-text guard: see judge.py. After a space,
# the version of our schema rewrite for outlines (schema.REWRITER); outlines' own schema compiler
# comes with its runtime, whose versions each record keeps beside its key.
DECODER = "outlines-llamacpp/llguidance-json-schema/greedy/1"
BACKEND_ID = f"{DECODER} {REWRITER}"
# Key format 2 held the llama_cpp backend's grammar text, so the id named the decoder alone.
FORMER_IDS = (DECODER,)


class OutlinesBackend:
    name = "outlines"
    backend_id = BACKEND_ID
    former_ids = FORMER_IDS
    verdict_probabilities = False

    def load(self, spec: ModelSpec, options: LoadOptions) -> OutlinesJudge:
        from offline_scorer.backends.outlines.judge import OutlinesJudge

        return OutlinesJudge(
            spec,
            BACKEND_ID,
            threads=options.threads,
            context_size=options.context_size,
            gpu_layers=options.gpu_layers,
        )

    def schema_problem(self, schema: Mapping[str, Any]) -> str | None:
        """outlines hands the rewritten schema to llguidance's JSON-schema compiler."""
        import llguidance

        try:
            text = json.dumps(for_outlines(schema, "check"), ensure_ascii=False)
            error = llguidance.LLMatcher.validate_grammar(
                llguidance.grammar_from("json_schema", text)
            )
        except (ValueError, TypeError) as caught:
            error = str(caught)
        if not error:
            return None
        return "the output schema cannot be decoded under a constraint: " + " ".join(error.split())


backend = OutlinesBackend()
