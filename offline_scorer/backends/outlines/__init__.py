"""The outlines backend: the same judge requests through outlines' llama.cpp integration and a
JSON-schema constraint. Optional (`pip install -e '.[outlines]'`); importing this package does
not import outlines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from offline_scorer.backends.outlines.schema import for_outlines
from offline_scorer.formats import OUTLINES_BACKEND_ID, OUTLINES_FORMER_IDS

if TYPE_CHECKING:
    from offline_scorer.backends import LoadOptions
    from offline_scorer.backends.outlines.judge import OutlinesJudge
    from offline_scorer.judging.protocol import JudgeRequest
    from offline_scorer.models.registry import ModelSpec

# The ids this backend keys records under (now, and in its former versions) are versions kept
# with the others in `offline_scorer.formats`.
BACKEND_ID = OUTLINES_BACKEND_ID
FORMER_IDS = OUTLINES_FORMER_IDS


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

    def former_record_problem(self, spec: ModelSpec, request: JudgeRequest) -> str | None:
        """A /1 record of a prompt holding control-token text was answered as if the text were
        control tokens; today such a request is refused."""
        from offline_scorer.backends.llama_cpp.vocabulary import control_text_problem

        return control_text_problem(spec, request)

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
