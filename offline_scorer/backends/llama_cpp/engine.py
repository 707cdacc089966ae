"""The llama.cpp engine: load a GGUF once, render its chat template, reuse the prompt prefix,
and decode greedily under a grammar mask, reading P(true) at boolean verdicts.

Public so benches and `cassette verify --live` can drive the steps one by one. Runtimes are
cached by path and settings: one model load per process.
"""

from __future__ import annotations

import atexit
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from offline_scorer.backends.llama_cpp.constraint import GrammarConstraint
from offline_scorer.backends.llama_cpp.guard import FreeTextGuard
from offline_scorer.backends.llama_cpp.prefill import chunk_ends, reusable
from offline_scorer.backends.llama_cpp.prompt_tokens import prompt_tokens
from offline_scorer.backends.llama_cpp.saved_prefixes import SavedPrefixes
from offline_scorer.errors import ModelError
from offline_scorer.judging.protocol import Message
from offline_scorer.models.entry import GGUF_TEMPLATE
from offline_scorer.models.registry import ModelSpec

RUNTIME_SEED = 0


@dataclass
class _Runtime:
    """One loaded model, shared by every engine opened on it: what its KV cache holds
    (`settled`) and the openings' KV states kept to put back (`saved`) describe this llama, so
    they live with it, not with an engine (a second judge on the same file reuses both)."""

    llama: Any
    vocab: Any
    n_vocab: int
    tokenizer: Any = None  # llguidance tokenizer, built at the first constrained call
    pieces: dict[int, str] = field(default_factory=dict)  # token id -> its text, as needed
    settled: list[int] = field(default_factory=list)  # leading cached tokens in whole chunks
    saved: SavedPrefixes = field(default_factory=SavedPrefixes)  # openings' KV states


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


@atexit.register
def _close_runtimes() -> None:
    """Free the models while llama_cpp is intact: left to garbage collection at interpreter
    exit, Llama.__del__ runs after its module's globals are gone and prints a traceback."""
    while _RUNTIMES:
        _RUNTIMES.popitem()[1].llama.close()


def _load_runtime(path: Path, n_ctx: int, threads: int, gpu_layers: int) -> _Runtime:
    key = (str(path), n_ctx, threads, gpu_layers)
    runtime = _RUNTIMES.get(key)
    if runtime is None:
        try:
            import llama_cpp
        except ImportError:
            raise ModelError(
                "the live judge needs llama-cpp-python: run scripts/setup (it builds it), "
                "or replay a cassette with --record-mode replay"
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


class Engine:
    """One loaded model and the decoding steps over it; the judge adds requests and identity."""

    def __init__(
        self,
        spec: ModelSpec,
        path: Path,
        *,
        threads: int,
        context_size: int,
        gpu_layers: int,
        reuse_prefix: bool = True,
    ) -> None:
        self.spec = spec
        self.context_size = context_size
        self.rt = _load_runtime(path, context_size, threads, gpu_layers)
        self.llama = self.rt.llama
        self.reuse_prefix = reuse_prefix
        self.prefilled = 0
        """Prompt tokens evaluated since the engine was made, after the reused prefix: what a
        floor of live judging (`python -m benchmarks.floor`) counts. Never part of a result."""
        self.forced_evaluated = 0
        """Tokens the grammar forced that were run through the model, for the same count: a
        forced run that ends the answer is not (its logits would never be read)."""
        self.chat_template = self.template()
        self._formatter = self._make_formatter(self.chat_template)

    def template(self) -> str:
        if self.spec.chat_template != GGUF_TEMPLATE:
            return self.spec.chat_template
        template = self.rt.llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(
                f"model {self.spec.name!r} has no chat template in its GGUF file and the "
                'registry gives none; add chat_template = "<jinja text>" to its registry '
                "entry (offline-scorer never guesses a chat format)"
            )
        return str(template)

    def token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self.rt.llama.detokenize([token], special=True).decode("utf-8", "replace")

    def _make_formatter(self, template: str) -> Any:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llama = self.rt.llama
        return Jinja2ChatFormatter(
            template=template,
            eos_token=self.token_text(llama.token_eos()),
            bos_token=self.token_text(llama.token_bos()),
            add_generation_prompt=True,
        )

    def render_messages(self, messages: Sequence[Message]) -> str:
        rendered = self._formatter(
            messages=[{"role": m.role, "content": m.content} for m in messages]
        )
        return str(rendered.prompt)

    def prompt(self, messages: Sequence[Message]) -> list[int]:
        """The tokens of a chat prompt: its messages' contents read as text, never as the
        control tokens they may spell (`prompt_tokens`)."""
        return self._with_bos(prompt_tokens(self.rt.llama, self.render_messages, messages))

    def tokenize(self, text: str) -> list[int]:
        """Tokens of text the product wrote, its control-token text parsed as such."""
        llama = self.rt.llama
        return self._with_bos(
            list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))
        )

    def _with_bos(self, tokens: list[int]) -> list[int]:
        llama = self.rt.llama
        bos = llama.token_bos()
        wants_bos = llama.metadata.get("tokenizer.ggml.add_bos_token", "false") == "true"
        if wants_bos and bos >= 0 and (not tokens or tokens[0] != bos):
            tokens.insert(0, bos)
        return tokens

    def tokenize_plain(self, text: str) -> list[int]:
        return list(self.rt.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def eval_prompt(self, tokens: list[int]) -> None:
        """Evaluate a prompt in the chunks `prefill.chunk_ends` gives it, keeping from the cache
        only whole chunks it shares, or putting back its first chunk's saved state: the state
        after the prompt is then the same whatever the cache held before (`prefill` says why
        that needs care)."""
        rt = self.rt
        llama = rt.llama
        ends, settled = chunk_ends(tokens, self.piece, llama.n_batch)
        first = ends[0]
        keep = 0
        if self.reuse_prefix:
            keep = reusable(ends, self._shared_with_cache(tokens))
            if keep < first < len(tokens) and rt.saved.restore(llama, tokens[:first]):
                keep = first
        llama.n_tokens = keep  # eval() drops the KV cache beyond n_tokens
        start = keep
        for end in ends:
            if end > start:
                llama.eval(tokens[start:end])
                if self.reuse_prefix and start == 0 and end == first < len(tokens):
                    rt.saved.save(llama, tokens[:first])
                start = end
        rt.settled = tokens[:settled]
        self.prefilled += len(tokens) - keep

    def _shared_with_cache(self, tokens: list[int]) -> int:
        """How many leading tokens of the prompt the cache holds in settled chunks."""
        llama = self.rt.llama
        count = min(len(self.rt.settled), llama.n_tokens, len(tokens))
        prompt = np.asarray(tokens[:count])
        same = (prompt == np.asarray(self.rt.settled[:count])) & (prompt == llama.input_ids[:count])
        differing = np.flatnonzero(~same)
        return int(differing[0]) if len(differing) else count

    def constraint(self, grammar: str, step: str, kind: str = "gbnf") -> GrammarConstraint:
        rt = self.rt
        if rt.tokenizer is None:
            import llguidance.llamacpp

            with warnings.catch_warnings():  # one deprecation warning per vocab entry
                warnings.simplefilter("ignore", DeprecationWarning)
                rt.tokenizer = llguidance.llamacpp.lltokenizer_from_vocab(rt.vocab)
        return GrammarConstraint(rt.tokenizer, grammar, rt.n_vocab, step, kind)

    def piece(self, token: int) -> str:
        pieces = self.rt.pieces
        if token not in pieces:
            pieces[token] = self.rt.llama.detokenize([token]).decode("utf-8", "replace")
        return pieces[token]

    def verdict(self, logits: np.ndarray) -> tuple[float, np.ndarray, np.ndarray] | None:
        """At a boolean verdict: (P(true), tokens spelling `true`..., tokens spelling `false`...).

        A verdict point is one where every token the grammar allows starts to spell `true` or
        `false` (or spells one and runs past it), and both occur. P(true) is the softmax mass of
        the first kind over both, so it is renormalised over what the grammar allows.
        """
        allowed = np.flatnonzero(np.isfinite(logits))
        if len(allowed) > _MAX_VERDICT_TOKENS:
            return None
        kinds = [_spells(self.piece(int(t))) for t in allowed]
        if None in kinds or not ({True, False} <= set(kinds)):
            return None
        is_true = np.array(kinds, dtype=bool)
        values = logits[allowed].astype(np.float64)
        weights = np.exp(values - values.max())
        p_true = float(weights[is_true].sum() / weights.sum())
        return p_true, allowed[is_true], allowed[~is_true]

    def choose(
        self,
        logits: np.ndarray,
        constraint: GrammarConstraint | None,
        threshold: float,
        verdicts: list[float] | None,
        guard: FreeTextGuard | None,
    ) -> int:
        """The greedy pick from one position's logits: the grammar's mask; at a boolean verdict,
        `true` exactly when P(true) reaches the threshold (P(true) appended to `verdicts`);
        otherwise the argmax, free text passed through the guard."""
        token = -1
        if constraint is not None:
            logits = constraint.mask_logits(logits)
            verdict = self.verdict(logits)
            if verdict is not None:
                p_true, true_ids, false_ids = verdict
                chosen = true_ids if p_true >= threshold else false_ids
                token = int(chosen[np.argmax(logits[chosen])])
                if verdicts is not None:
                    verdicts.append(p_true)
        if token < 0 and guard is not None:
            logits = guard.mask(logits)
        if token < 0:
            token = int(np.argmax(logits))
        if guard is not None:
            guard.chose(token)
        return token

    def _nothing_left(self, constraint: GrammarConstraint | None, may_end: bool) -> bool:
        """Whether the grammar leaves nothing to choose: it has finished, or (where the next
        step could pick the end, `may_end`) it allows nothing but a token that ends generation.
        The logits a further evaluation gives would then go unread."""
        import llama_cpp

        if constraint is None:
            return False
        if constraint.finished:
            return True
        vocab = self.rt.vocab
        return may_end and constraint.only_end_remains(
            lambda token: bool(llama_cpp.llama_vocab_is_eog(vocab, token))
        )

    def decode(
        self,
        prompt: list[int],
        constraint: GrammarConstraint | None,
        budget: int,
        *,
        threshold: float = 0.5,
        stop_at_eog: bool = True,
        verdicts: list[float] | None = None,
        guard: FreeTextGuard | None = None,
    ) -> tuple[list[int], int, bool]:
        """Greedy decoding: (tokens, how many were forced by the grammar, finished?).

        At each boolean verdict the decoder commits to `true` exactly when P(true) reaches the
        judge's threshold, and appends P(true) to `verdicts` (when given). Tokens the grammar
        forces to the end of the answer are not run through the model, and an answer the
        grammar writes whole (the questions when the source has no more candidates than are
        asked) does not read its prompt: no logits would be read after them, and the next
        prompt's state does not depend on this one (`prefill`), so the bytes are the same.
        """
        import llama_cpp

        rt = self.rt
        llama = rt.llama

        def complete() -> bool:
            return self._nothing_left(constraint, stop_at_eog and len(generated) < budget)

        generated: list[int] = []
        forced = 0
        if constraint is not None and (opening := constraint.forced()):
            generated += opening
            forced += len(opening)
        if complete():
            return generated, forced, True  # the grammar wrote the whole answer: nothing to read
        self.eval_prompt(prompt)
        if generated:
            llama.eval(generated)
            self.forced_evaluated += len(generated)
        while len(generated) < budget:
            pointer = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
            logits = np.ctypeslib.as_array(pointer, shape=(rt.n_vocab,))
            token = self.choose(logits, constraint, threshold, verdicts, guard)
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
            if complete():
                return generated, forced, True
            llama.eval(step_tokens)
            self.forced_evaluated += len(step_tokens) - 1
        return generated, forced, False
