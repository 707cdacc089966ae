"""The llama.cpp backend: local GGUF models through llama-cpp-python, constrained by llguidance.

Importing this package does not import llama-cpp-python; loading a model does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from offline_scorer.formats import LLAMA_CPP_BACKEND_ID

if TYPE_CHECKING:
    from offline_scorer.backends import LoadOptions
    from offline_scorer.backends.llama_cpp.judge import LlamaJudge
    from offline_scorer.models.registry import ModelSpec

# The id this backend keys records under is a version kept with the others in
# `offline_scorer.formats`; replay needs it without the runtime.
BACKEND_ID = LLAMA_CPP_BACKEND_ID


class LlamaCppBackend:
    """The default backend: our own greedy loop over llama-cpp-python, llguidance masks."""

    name = "llama_cpp"
    backend_id = BACKEND_ID
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
