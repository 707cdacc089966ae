"""The llama.cpp backend: local GGUF models through llama-cpp-python, constrained by llguidance.

Importing this package does not import llama-cpp-python; loading a model does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from offline_scorer.backends.llama_cpp.gbnf import COMPILER

if TYPE_CHECKING:
    from offline_scorer.backends import LoadOptions
    from offline_scorer.backends.llama_cpp.judge import LlamaJudge
    from offline_scorer.judging.protocol import JudgeRequest
    from offline_scorer.models.registry import ModelSpec

# The decoding method, as it enters cassette keys: GBNF grammars run by llguidance, greedy argmax
# over the masked logits, grammar-forced tokens evaluated as one batch; since /2, boolean verdicts
# committed by P(true) against the threshold and free text kept by the loop/copy guard; since /3,
# message contents tokenized as text, never as the control tokens they may spell
# (prompt_tokens.py). Then, after a space, the compiler that turns a request's schema into that
# GBNF (gbnf.COMPILER): keys hold the schema, so a change to the grammar a schema compiles to
# must change this id. Replay needs this constant without importing the runtime, which is why it
# lives here.
DECODER = (
    "llguidance-gbnf/greedy-argmax+forced-batch+verdict-threshold+free-text-guard"
    "+contents-as-text/3"
)
BACKEND_ID = f"{DECODER} {COMPILER}"
_DECODER_2 = "llguidance-gbnf/greedy-argmax+forced-batch+verdict-threshold+free-text-guard/2"
# Newest first: the /2 decoder under key format 3; key formats 1 and 2 held the grammar text
# itself, so their ids named the decoder alone. Every former decoder parsed control-token text
# in contents, so a record of one stands for today's answer only if its prompt holds none.
FORMER_IDS = (
    f"{_DECODER_2} {COMPILER}",
    _DECODER_2,
    "llguidance-gbnf/greedy-argmax+forced-batch/1",
)


class LlamaCppBackend:
    """The default backend: our own greedy loop over llama-cpp-python, llguidance masks."""

    name = "llama_cpp"
    backend_id = BACKEND_ID
    former_ids = FORMER_IDS
    verdict_probabilities = True

    def load(self, spec: ModelSpec, options: LoadOptions) -> LlamaJudge:
        from offline_scorer.backends.llama_cpp.judge import LlamaJudge

        return LlamaJudge(
            spec,
            threads=options.threads,
            context_size=options.context_size,
            gpu_layers=options.gpu_layers,
        )

    def schema_problem(self, schema: Mapping[str, Any]) -> str | None:
        from offline_scorer.backends.llama_cpp.schema_source import schema_problem

        return schema_problem(schema)

    def former_record_problem(self, spec: ModelSpec, request: JudgeRequest) -> str | None:
        from offline_scorer.backends.llama_cpp.vocabulary import control_text_problem

        return control_text_problem(spec, request)


backend = LlamaCppBackend()


def load_judge(
    model: str | None = None,
    *,
    threads: int | None = None,
    context_size: int | None = None,
    gpu_layers: int | None = None,
) -> LlamaJudge:
    """The live judge for a registry name ('default' if None) or a path to a .gguf file."""
    from offline_scorer.backends.llama_cpp.judge import LlamaJudge
    from offline_scorer.models.registry import load_registry

    spec = load_registry().resolve(model)
    return LlamaJudge(spec, threads=threads, context_size=context_size, gpu_layers=gpu_layers)
