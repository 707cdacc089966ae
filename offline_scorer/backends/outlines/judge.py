"""`OutlinesJudge`: the same requests, decoded by outlines' llama.cpp integration.

It shares the llama.cpp engine's model load and chat-template rendering, so both backends send
the model the same prompt tokens; outlines then generates greedily under a logits processor
compiled from the request's JSON schema (see `schema.py` for what is rewritten first).

What it cannot do that the llama_cpp backend does: read P(true) at a verdict (so no verdict
probabilities and no calibrated threshold: verdicts are the plain argmax), and the free-text
guard against loops and prompt-copying. Its backend id says so, so its recordings never mix
with the default backend's.
"""

from __future__ import annotations

import json
import warnings
from importlib.metadata import version
from typing import Any

import numpy as np

from offline_scorer.backends.llama_cpp.engine import Engine
from offline_scorer.backends.llama_cpp.prompt_tokens import control_text_in
from offline_scorer.backends.outlines.schema import for_outlines
from offline_scorer.errors import ContextOverflowError, GenerationError, ModelError
from offline_scorer.judging.protocol import (
    Completion,
    JudgeBase,
    JudgeIdentity,
    JudgeRequest,
    Usage,
)
from offline_scorer.models.registry import ModelSpec, template_sha256
from offline_scorer.settings import default_threads


class _CheckedProcessor:
    """outlines' logits processor, with its failures kept.

    llama-cpp-python runs a logits processor inside a ctypes callback, where an exception is
    printed and swallowed and decoding goes on unconstrained. Keep the first error and from then
    on allow only end-of-generation, so `complete` raises instead of returning free text.
    """

    def __init__(self, inner: Any, eos: int) -> None:
        self.inner = inner
        self.eos = eos
        self.error: BaseException | None = None

    def reset(self) -> None:
        self.error = None
        self.inner.reset()

    def __call__(self, input_ids: Any, logits: Any) -> Any:
        if self.error is None:
            try:
                return self.inner(input_ids, logits)
            except BaseException as error:  # re-raised by complete()
                self.error = error
        stopped = np.full_like(logits, -np.inf)
        stopped[..., self.eos] = 0.0
        return stopped


class OutlinesJudge(JudgeBase):
    """A judge answering through `outlines.Generator` over a llama.cpp model."""

    def __init__(
        self,
        spec: ModelSpec,
        backend_id: str,
        *,
        threads: int | None = None,
        context_size: int | None = None,
        gpu_layers: int | None = None,
    ) -> None:
        try:
            import outlines
            from outlines.backends.llguidance import LLGuidanceBackend
        except ImportError as error:
            raise ModelError(
                f"the outlines backend needs the 'outlines' extra ({error.name} is missing): "
                "run `pip install -e '.[outlines]'`"
            ) from None
        path, sha256 = spec.verify()
        self.spec = spec
        self.context_size = context_size or spec.context_size
        self.engine = Engine(
            spec,
            path,
            threads=threads or default_threads(),
            context_size=self.context_size,
            gpu_layers=spec.gpu_layers if gpu_layers is None else gpu_layers,
            reuse_prefix=False,  # outlines resets the model's cache after every call
        )
        self._identity = JudgeIdentity(
            sha256, template_sha256(self.engine.chat_template), backend_id, None
        )
        self._outlines = outlines
        self._model = outlines.from_llamacpp(self.engine.llama, chat_mode=False)
        # outlines' llguidance backend, not its default outlines-core one: on the fixtures it used
        # a tenth of the memory, ran faster, and agreed with the llama_cpp backend on 11 of 12
        # scores (outlines-core: 6 of 12; it spelled fixed strings with odd token splits).
        # Built once: outlines.Generator would rebuild the tokenizer on every call.
        with warnings.catch_warnings():  # llama_cpp warns once per vocabulary entry
            warnings.simplefilter("ignore", DeprecationWarning)
            self._compiler = LLGuidanceBackend(self._model)

    @property
    def identity(self) -> JudgeIdentity:
        return self._identity

    def runtime_versions(self) -> dict[str, str]:
        return {name: version(name) for name in ("outlines", "outlines_core", "llama-cpp-python")}

    def _processor(self, schema: dict[str, Any], step: str) -> Any:
        # compact JSON, one spelling per value, as our own grammars; not cached: every item's
        # schemas differ (its claims and questions are constants in them)
        compact = {**for_outlines(schema, step), "x-guidance": {"whitespace_flexible": False}}
        return self._compiler.get_json_schema_logits_processor(json.dumps(compact))

    def complete(self, request: JudgeRequest) -> Completion:
        import llama_cpp

        sampling = request.sampling
        step = request.step
        if sampling.temperature != 0:
            raise GenerationError(f"{step}: the outlines judge decodes greedily (temperature 0)")
        engine = self.engine
        found = control_text_in(engine.llama, request.messages)
        if found is not None:
            raise GenerationError(
                f"{step}: the {found.role} message holds text the model reads as a control "
                "token (such as <|im_start|>); the outlines backend hands llama.cpp the prompt "
                "as one string and cannot keep it from being read as one, so it refuses; use "
                "--backend llama_cpp, which reads it as text, or remove that text"
            )
        prompt = engine.render_messages(request.messages)
        prompt_tokens = len(engine.tokenize(prompt))
        budget = sampling.max_tokens
        if prompt_tokens + budget > self.context_size:
            raise ContextOverflowError(
                f"{step}: the prompt is {prompt_tokens} tokens and the answer may take up to "
                f"{budget} more, but model {self.spec.name!r} runs with a context of "
                f"{self.context_size} tokens; shorten the source or use a larger context"
            )
        checked = None
        if request.output_schema is not None:
            inner = self._processor(dict(request.output_schema), step)
            checked = _CheckedProcessor(inner, engine.llama.token_eos())
        generator = self._outlines.Generator(self._model, processor=checked)
        llama_cpp.llama_perf_context_reset(engine.llama.ctx)
        text = generator(
            prompt,
            max_tokens=budget,
            temperature=0.0,  # llama-cpp-python's greedy sampler
            seed=sampling.seed,
            repeat_penalty=1.0,
            frequency_penalty=0.0,
            presence_penalty=0.0,
        )
        generated = int(llama_cpp.llama_perf_context(engine.llama.ctx).n_eval)
        if checked is not None and checked.error is not None:
            raise GenerationError(
                f"{step}: the outlines logits processor failed, so the answer was not "
                f"constrained: {type(checked.error).__name__}: {checked.error}"
            )
        if generated >= budget:
            raise GenerationError(
                f"{step}: the answer reached its {budget}-token limit before it was complete; "
                "no verdict is taken from a cut-off answer"
            )
        return Completion(text=str(text), usage=Usage(prompt_tokens, generated, 0))
