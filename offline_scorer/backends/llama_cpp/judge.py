"""`LlamaJudge`: answers judge requests with a local GGUF model, greedily and under a grammar.

One model load per process (runtimes are cached by path and settings). Each call renders the
messages with the model's own chat template, reuses the KV cache for the prefix it shares with
the previous call (the common system message), then decodes token by token with our own greedy
loop so the grammar mask is applied where a failure raises instead of being swallowed.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from offline_scorer.backends.llama_cpp import BACKEND_ID
from offline_scorer.backends.llama_cpp.constraint import GrammarConstraint
from offline_scorer.backends.llama_cpp.gbnf import request_grammar
from offline_scorer.errors import ContextOverflowError, GenerationError, ModelError
from offline_scorer.judging.protocol import (
    Completion,
    JudgeIdentity,
    JudgeRequest,
    Message,
    SamplingSettings,
    Usage,
)
from offline_scorer.models.registry import GGUF_TEMPLATE, ModelSpec, template_sha256

THREADS_ENV = "OFFLINE_SCORER_THREADS"
RUNTIME_SEED = 0


def default_threads() -> int:
    env = os.environ.get(THREADS_ENV)
    if env:
        try:
            value = int(env)
        except ValueError:
            value = 0
        if value < 1:
            raise ModelError(f"{THREADS_ENV} must be a whole number >= 1, got {env!r}")
        return value
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    forced_tokens: int  # of completion_tokens, those the grammar allowed no alternative to
    seconds: float
    verdict_probabilities: tuple[float, ...] = ()


@dataclass
class _Runtime:
    llama: Any
    vocab: Any
    n_vocab: int
    tokenizer: Any = None  # llguidance tokenizer, built on first constrained call (~0.3 s)
    pieces: dict[int, str] = field(default_factory=dict)  # token id -> its text, as needed


FREE_TEXT_TOKENS = 256  # a step allowing more tokens than this is writing free text
_MAX_VERDICT_TOKENS = 32  # a verdict point allows a handful of tokens (t, tr, true, f, ...)
_VERDICT_WORDS = {True: "true", False: "false"}


def _spells(piece: str) -> bool | None:
    """True/False when a token's text starts to spell `true`/`false` (or runs past it)."""
    for kind, word in _VERDICT_WORDS.items():
        if piece and (word.startswith(piece) or piece.startswith(word)):
            return kind
    return None


_RUNTIMES: dict[tuple[str, int, int, int], _Runtime] = {}


def _load_runtime(path: Path, n_ctx: int, threads: int, gpu_layers: int) -> _Runtime:
    key = (str(path), n_ctx, threads, gpu_layers)
    runtime = _RUNTIMES.get(key)
    if runtime is None:
        try:
            import llama_cpp
        except ImportError:
            raise ModelError(
                "the live judge needs llama-cpp-python: install it with "
                "`pip install 'offline-scorer[live]'` (or replay a cassette instead)"
            ) from None
        try:
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                n_gpu_layers=gpu_layers,
                seed=RUNTIME_SEED,
                verbose=False,
            )
        except (ValueError, RuntimeError) as error:
            raise ModelError(f"cannot load GGUF model {path}: {error}") from None
        vocab = llama_cpp.llama_model_get_vocab(llama.model)
        runtime = _Runtime(llama=llama, vocab=vocab, n_vocab=llama.n_vocab())
        _RUNTIMES[key] = runtime
    return runtime


class FreeTextGuard:
    """Keeps free text from looping or copying: bans the token that would complete a run of
    `n` tokens already written in this string, or found in one of the protected texts.

    A step is free text when the grammar allows more than FREE_TEXT_TOKENS tokens there; only
    such steps are masked, so verdicts and choices between fixed strings never are. Tokens the
    grammar forces (JSON structure between two strings) start a new string. A ban that would
    leave nothing allowed is not applied.
    """

    def __init__(self, n: int, protected: Sequence[Sequence[int]]) -> None:
        self.n = n
        self.protected: dict[tuple[int, ...], set[int]] = {}
        for tokens in protected:
            self._index(self.protected, tokens)
        self.own: dict[tuple[int, ...], set[int]] = {}
        self.run: list[int] = []

    def _index(self, table: dict[tuple[int, ...], set[int]], tokens: Sequence[int]) -> None:
        for end in range(self.n - 1, len(tokens)):
            table.setdefault(tuple(tokens[end - self.n + 1 : end]), set()).add(tokens[end])

    def mask(self, logits: np.ndarray) -> np.ndarray:
        if len(self.run) < self.n - 1:
            return logits
        if int(np.count_nonzero(np.isfinite(logits))) <= FREE_TEXT_TOKENS:
            return logits
        head = tuple(self.run[len(self.run) - self.n + 1 :])
        banned = self.protected.get(head, set()) | self.own.get(head, set())
        if not banned:
            return logits
        masked = logits.copy()
        masked[list(banned)] = -np.inf
        return masked if np.isfinite(masked).any() else logits

    def chose(self, token: int) -> None:
        self.run.append(token)
        if len(self.run) >= self.n:
            self._index(self.own, self.run[-self.n :])

    def new_string(self) -> None:
        self.run, self.own = [], {}


class LlamaJudge:
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
        gpu = spec.gpu_layers if gpu_layers is None else gpu_layers
        self._rt = _load_runtime(path, self.context_size, self.threads, gpu)
        self.reuse_prefix = reuse_prefix
        template = self._template()
        template_digest = template_sha256(template)
        if spec.chat_template_sha256 and spec.chat_template_sha256 != template_digest:
            raise ModelError(
                f"model {spec.name!r}: chat template sha256 mismatch: expected "
                f"{spec.chat_template_sha256}, got {template_digest}"
            )
        self.verdict_threshold = spec.verdict_threshold
        self.identity = JudgeIdentity(sha256, template_digest, BACKEND_ID, self.verdict_threshold)
        self._formatter = self._make_formatter(template)
        self.last: Generation | None = None

    def _template(self) -> str:
        if self.spec.chat_template != GGUF_TEMPLATE:
            return self.spec.chat_template
        template = self._rt.llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(
                f"model {self.spec.name!r} has no chat template in its GGUF file and the "
                'registry gives none; add chat_template = "<jinja text>" to its registry '
                "entry (offline-scorer never guesses a chat format)"
            )
        return str(template)

    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self._rt.llama.detokenize([token], special=True).decode("utf-8", "replace")

    def _make_formatter(self, template: str) -> Any:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llama = self._rt.llama
        return Jinja2ChatFormatter(
            template=template,
            eos_token=self._token_text(llama.token_eos()),
            bos_token=self._token_text(llama.token_bos()),
            add_generation_prompt=True,
        )

    def render_messages(self, messages: Sequence[Message]) -> str:
        rendered = self._formatter(
            messages=[{"role": m.role, "content": m.content} for m in messages]
        )
        return str(rendered.prompt)

    def render(self, request: JudgeRequest) -> str:
        return self.render_messages(request.messages)

    def tokenize(self, text: str) -> list[int]:
        llama = self._rt.llama
        tokens = list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))
        bos = llama.token_bos()
        wants_bos = llama.metadata.get("tokenizer.ggml.add_bos_token", "false") == "true"
        if wants_bos and bos >= 0 and (not tokens or tokens[0] != bos):
            tokens.insert(0, bos)
        return tokens

    def tokenize_plain(self, text: str) -> list[int]:
        return list(self._rt.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _eval_prompt(self, tokens: list[int]) -> None:
        llama = self._rt.llama
        keep = 0
        if self.reuse_prefix and llama.n_tokens > 0:
            cached = llama.input_ids[: llama.n_tokens]
            limit = min(len(cached), len(tokens) - 1)  # always evaluate >= 1 token for logits
            while keep < limit and cached[keep] == tokens[keep]:
                keep += 1
        llama.n_tokens = keep  # eval() drops the KV cache beyond n_tokens
        llama.eval(tokens[keep:])

    def _constraint(self, grammar: str, step: str) -> GrammarConstraint:
        rt = self._rt
        if rt.tokenizer is None:
            import llguidance.llamacpp

            with warnings.catch_warnings():  # one deprecation warning per vocab entry
                warnings.simplefilter("ignore", DeprecationWarning)
                rt.tokenizer = llguidance.llamacpp.lltokenizer_from_vocab(rt.vocab)
        return GrammarConstraint(rt.tokenizer, grammar, rt.n_vocab, step)

    def _piece(self, token: int) -> str:
        pieces = self._rt.pieces
        if token not in pieces:
            pieces[token] = self._rt.llama.detokenize([token]).decode("utf-8", "replace")
        return pieces[token]

    def _verdict(self, logits: np.ndarray) -> tuple[float, np.ndarray, np.ndarray] | None:
        """At a boolean verdict: (P(true), tokens spelling `true`..., tokens spelling `false`...).

        A verdict point is one where every token the grammar allows starts to spell `true` or
        `false` (or spells one and runs past it), and both occur. P(true) is the softmax mass of
        the first kind over both, so it is renormalised over what the grammar allows.
        """
        allowed = np.flatnonzero(np.isfinite(logits))
        if len(allowed) > _MAX_VERDICT_TOKENS:
            return None
        kinds = [_spells(self._piece(int(t))) for t in allowed]
        if None in kinds or not ({True, False} <= set(kinds)):
            return None
        is_true = np.array(kinds, dtype=bool)
        values = logits[allowed].astype(np.float64)
        weights = np.exp(values - values.max())
        p_true = float(weights[is_true].sum() / weights.sum())
        return p_true, allowed[is_true], allowed[~is_true]

    def decode(
        self,
        prompt: list[int],
        constraint: GrammarConstraint | None,
        budget: int,
        *,
        stop_at_eog: bool = True,
        verdicts: list[float] | None = None,
        guard: FreeTextGuard | None = None,
    ) -> tuple[list[int], int, bool]:
        """Greedy decoding: (tokens, how many were forced by the grammar, finished?).

        At each boolean verdict the decoder commits to `true` exactly when P(true) reaches the
        judge's threshold, and appends P(true) to `verdicts` (when given).
        """
        import llama_cpp

        rt = self._rt
        llama = rt.llama
        self._eval_prompt(prompt)
        generated: list[int] = []
        forced = 0
        if constraint is not None and (opening := constraint.forced()):
            generated += opening
            forced += len(opening)
            llama.eval(opening)
        while len(generated) < budget:
            pointer = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
            logits = np.ctypeslib.as_array(pointer, shape=(rt.n_vocab,))
            token = -1
            if constraint is not None:
                logits = constraint.mask_logits(logits)
                verdict = self._verdict(logits)
                if verdict is not None:
                    p_true, true_ids, false_ids = verdict
                    chosen = true_ids if p_true >= self.verdict_threshold else false_ids
                    token = int(chosen[np.argmax(logits[chosen])])
                    if verdicts is not None:
                        verdicts.append(p_true)
            if token < 0 and guard is not None:
                logits = guard.mask(logits)
            if token < 0:
                token = int(np.argmax(logits))
            if guard is not None:
                guard.chose(token)
            if stop_at_eog and llama_cpp.llama_vocab_is_eog(rt.vocab, token):
                return generated, forced, True
            step_tokens = [token]
            if constraint is not None:
                constraint.consume(token)
                step_tokens += constraint.forced()
                forced += len(step_tokens) - 1
                if guard is not None and len(step_tokens) > 1:
                    guard.new_string()
            generated += step_tokens
            if constraint is not None and constraint.finished:
                return generated, forced, True
            llama.eval(step_tokens)
        return generated, forced, False

    def generate(
        self,
        step: str,
        messages: Sequence[Message],
        grammar: str | None,
        sampling: SamplingSettings,
    ) -> Generation:
        """One model exchange; `grammar` is GBNF text (None: unconstrained)."""
        started = time.perf_counter()
        prompt = self.tokenize(self.render_messages(messages))
        budget = sampling.max_tokens
        if sampling.temperature != 0:
            raise GenerationError(f"{step}: the live judge decodes greedily (temperature 0)")
        if len(prompt) + budget > self.context_size:
            raise ContextOverflowError(
                f"{step}: the prompt is {len(prompt)} tokens and the answer may take up to "
                f"{budget} more ({len(prompt) + budget} in all), but model {self.spec.name!r} "
                f"runs with a context of {self.context_size} tokens; shorten the source by at "
                f"least {len(prompt) + budget - self.context_size} tokens or use a larger context"
            )
        constraint = self._constraint(grammar, step) if grammar is not None else None
        verdicts: list[float] = []
        guard = None
        if sampling.no_repeat_ngram and constraint is not None:
            guard = FreeTextGuard(
                sampling.no_repeat_ngram, [self.tokenize_plain(text) for text in sampling.no_copy]
            )
        tokens, forced, finished = self.decode(
            prompt, constraint, budget, verdicts=verdicts, guard=guard
        )
        if not finished:
            raise GenerationError(
                f"{step}: the answer reached its {budget}-token limit before it was complete; "
                "no verdict is taken from a cut-off answer"
            )
        if constraint is not None:
            constraint.assert_complete()
        try:
            text = self._rt.llama.detokenize(tokens).decode("utf-8")
        except UnicodeDecodeError:
            raise GenerationError(f"{step}: the model produced bytes that are not UTF-8") from None
        return Generation(
            text, len(prompt), len(tokens), forced, time.perf_counter() - started, tuple(verdicts)
        )

    def complete(self, request: JudgeRequest) -> Completion:
        grammar = request_grammar(request.output_schema)
        self.last = generation = self.generate(
            request.step, request.messages, grammar, request.sampling
        )
        return Completion(
            text=generation.text,
            verdict_probabilities=generation.verdict_probabilities if grammar else None,
            verdict_threshold=self.verdict_threshold if grammar else None,
            usage=Usage(
                generation.prompt_tokens, generation.completion_tokens, generation.forced_tokens
            ),
        )

    @property
    def runtime_versions(self) -> dict[str, str]:
        """Versions that do not enter cassette keys but are worth keeping beside a recording."""
        from importlib.metadata import version

        return {
            "llama-cpp-python": version("llama-cpp-python"),
            "llguidance": version("llguidance"),
        }


def load_judge(
    model: str | None = None,
    *,
    threads: int | None = None,
    context_size: int | None = None,
    gpu_layers: int | None = None,
) -> LlamaJudge:
    """The live judge for a registry name ('default' if None) or a path to a .gguf file."""
    from offline_scorer.models.registry import load_registry

    spec = load_registry().resolve(model)
    return LlamaJudge(spec, threads=threads, context_size=context_size, gpu_layers=gpu_layers)
