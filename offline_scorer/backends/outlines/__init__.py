"""The outlines backend: the same judge requests through outlines' llama.cpp integration and a
JSON-schema constraint. Optional (`pip install -e '.[outlines]'`); importing this package does
not import outlines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from offline_scorer.backends.outlines.schema import for_outlines
from offline_scorer.formats import OUTLINES_BACKEND_ID

if TYPE_CHECKING:
    from offline_scorer.backends import LoadOptions
    from offline_scorer.backends.outlines.judge import OutlinesJudge
    from offline_scorer.models.registry import ModelSpec

# The id this backend keys records under is a version kept with the others in
# `offline_scorer.formats`.
BACKEND_ID = OUTLINES_BACKEND_ID


class OutlinesBackend:
    name = "outlines"
    backend_id = BACKEND_ID
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
