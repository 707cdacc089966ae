"""`LlamaJudge`: answers judge requests with a local GGUF model, greedily and under a grammar.

One model load per process (runtimes are cached by path and settings). Each call renders the
messages with the model's own chat template, reuses the KV cache for the prefix it shares with
the previous call (the common system message), then decodes token by token with our own greedy
loop so the grammar mask is applied where a failure raises instead of being swallowed.
"""

from __future__ import annotations

from collections.abc import Sequence

from offline_scorer.backends.llama_cpp import BACKEND_ID
from offline_scorer.backends.llama_cpp.engine import Engine
from offline_scorer.backends.llama_cpp.guard import FreeTextGuard
from offline_scorer.backends.llama_cpp.schema_source import constraint_source
from offline_scorer.errors import ContextOverflowError, GenerationError, ModelError
from offline_scorer.judging.protocol import (
    Completion,
    JudgeBase,
    JudgeIdentity,
    JudgeRequest,
    Message,
    SamplingSettings,
    Usage,
)
from offline_scorer.models.registry import ModelSpec, template_sha256
from offline_scorer.settings import default_threads


class LlamaJudge(JudgeBase):
    """A judge backed by llama-cpp-python. Build it with `load_judge`."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        threads: int | None = None,
        context_size: int | None = None,
        gpu_layers: int | None = None,
        reuse_prefix: bool = True,
    ) -> None:
        path, sha256 = spec.verify()
        self.spec = spec
        self.threads = threads or default_threads()
        self.context_size = context_size or spec.context_size
        self.engine = Engine(
            spec,
            path,
            threads=self.threads,
            context_size=self.context_size,
            gpu_layers=spec.gpu_layers if gpu_layers is None else gpu_layers,
            reuse_prefix=reuse_prefix,
        )
        template_digest = template_sha256(self.engine.chat_template)
        if spec.chat_template_sha256 and spec.chat_template_sha256 != template_digest:
            raise ModelError(
                f"model {spec.name!r}: chat template sha256 mismatch: expected "
                f"{spec.chat_template_sha256}, got {template_digest}"
            )
        self.verdict_threshold = spec.verdict_threshold
        self._identity = JudgeIdentity(sha256, template_digest, BACKEND_ID, self.verdict_threshold)

    @property
    def identity(self) -> JudgeIdentity:
        return self._identity

    def render(self, request: JudgeRequest) -> str:
        return self.engine.render_messages(request.messages)

    def generate(
        self,
        step: str,
        messages: Sequence[Message],
        grammar: str | None,
        sampling: SamplingSettings,
        grammar_kind: str = "gbnf",
    ) -> Completion:
        """One model exchange; `grammar` is GBNF text, or with grammar_kind "json_schema" a
        JSON schema for llguidance (None: unconstrained)."""
        engine = self.engine
        prompt = engine.prompt(messages)
        budget = sampling.max_tokens
        self._check_fits(step, len(prompt), sampling)
        constraint = engine.constraint(grammar, step, grammar_kind) if grammar is not None else None
        verdicts: list[float] = []
        guard = None
        if sampling.no_repeat_ngram and constraint is not None:
            guard = FreeTextGuard(
                sampling.no_repeat_ngram, [engine.tokenize_plain(text) for text in sampling.no_copy]
            )
        threshold = (
            self.verdict_threshold
            if sampling.verdict_threshold is None
            else sampling.verdict_threshold
        )
        tokens, forced, finished = engine.decode(
            prompt,
            constraint,
            budget,
            threshold=threshold,
            verdicts=verdicts,
            guard=guard,
        )
        if not finished and not sampling.cut_at_limit:
            raise GenerationError(
                f"{step}: the answer reached its {budget}-token limit before it was complete; "
                "no verdict is taken from a cut-off answer"
            )
        if constraint is not None and finished:
            constraint.assert_complete()
        try:
            text = engine.llama.detokenize(tokens).decode("utf-8")
        except UnicodeDecodeError:
            raise GenerationError(f"{step}: the model produced bytes that are not UTF-8") from None
        constrained = grammar is not None
        return Completion(
            text=text,
            verdict_probabilities=tuple(verdicts) if constrained else None,
            verdict_threshold=threshold if constrained else None,
            usage=Usage(len(prompt), len(tokens), forced),
            finish_reason="stop" if finished else "length",
        )

    def _check_fits(self, step: str, prompt_tokens: int, sampling: SamplingSettings) -> None:
        """Refuse, before decoding, what this judge cannot do: sampling, or a prompt whose
        answer could overrun the context (a cut answer would give no verdict)."""
        budget = sampling.max_tokens
        if sampling.temperature != 0:
            raise GenerationError(f"{step}: the live judge decodes greedily (temperature 0)")
        if prompt_tokens + budget > self.context_size:
            raise ContextOverflowError(
                f"{step}: the prompt is {prompt_tokens} tokens and the answer may take up to "
                f"{budget} more ({prompt_tokens + budget} in all), but model {self.spec.name!r} "
                f"runs with a context of {self.context_size} tokens; shorten the source by at "
                f"least {prompt_tokens + budget - self.context_size} tokens or use a larger context"
            )

    def complete(self, request: JudgeRequest) -> Completion:
        source = constraint_source(request.output_schema)
        if source is None:
            return self.generate(request.step, request.messages, None, request.sampling)
        kind, grammar = source
        return self.generate(request.step, request.messages, grammar, request.sampling, kind)

    def runtime_versions(self) -> dict[str, str]:
        """Versions that do not enter cassette keys but are worth keeping beside a recording."""
        from importlib.metadata import version

        return {
            "llama-cpp-python": version("llama-cpp-python"),
            "llguidance": version("llguidance"),
        }
