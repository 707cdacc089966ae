"""Prompt-lookup drafting for the llama.cpp engine: the experiment `bench_speculative.py` runs.

Greedy speculative decoding: after each chosen token, the next K tokens are guessed by finding
the last n tokens earlier in the context (the prompt holds the source and the summary, which
claims and reasons copy) and taking what followed there. The chosen token and the guesses are
evaluated in one batch; each guess is kept while it equals the token the plain decoder would
choose from the batch's logits at its position (grammar mask, verdict threshold and guard
applied exactly as in `Engine.decode`), so the first mismatch ends the run and its KV cells are
dropped.

Kept out of the package: on this build a token evaluated inside a batch gets logits that differ
from the same token evaluated alone, so outputs are not byte-identical to plain greedy decoding
(the bench measures by how much); shipped, it would have to be a backend id of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from offline_scorer.backends.llama_cpp.constraint import GrammarConstraint
from offline_scorer.backends.llama_cpp.engine import Engine
from offline_scorer.backends.llama_cpp.guard import FreeTextGuard


@dataclass
class DraftCounts:
    """What drafting did: batches evaluated, guesses made and guesses kept."""

    batches: int = 0
    drafted: int = 0
    accepted: int = 0


def lookup_draft(history: list[int], ngram: int, count: int) -> list[int]:
    """Up to `count` tokens that followed the latest earlier occurrence of the context's last
    n tokens (n from `ngram` down to 2); none when nothing repeats."""
    for n in range(ngram, 1, -1):
        if len(history) <= n:
            continue
        tail = history[-n:]
        for start in range(len(history) - n - 1, -1, -1):
            if history[start : start + n] == tail:
                follow = history[start + n : start + n + count]
                if follow:
                    return follow
    return []


class LookupEngine(Engine):
    """`Engine` whose decode drafts by prompt lookup; everything else is the plain engine's."""

    draft_tokens = 3
    ngram = 3

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.counts = DraftCounts()

    def _eval_rows(self, tokens: list[int], first_row: int) -> list[np.ndarray]:
        """Evaluate tokens in one batch; the logits at positions first_row.. (views, valid until
        the next evaluation)."""
        import llama_cpp

        llama = self.rt.llama
        llama._ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)
        batch = llama._batch
        batch.set_batch(batch=tokens, n_past=llama.n_tokens, logits_all=True)
        for index in range(len(tokens)):
            batch.batch.logits[index] = index >= first_row
        llama._ctx.decode(batch)
        llama.input_ids[llama.n_tokens : llama.n_tokens + len(tokens)] = tokens
        llama.n_tokens += len(tokens)
        self.counts.batches += 1
        n_vocab = self.rt.n_vocab
        return [
            np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama.ctx, i), shape=(n_vocab,))
            for i in range(first_row, len(tokens))
        ]

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
        import llama_cpp

        llama = self.rt.llama
        self.eval_prompt(prompt)
        history = list(prompt)
        generated: list[int] = []
        forced = 0
        draft: list[int] = []
        rows: list[np.ndarray] = []
        pointer = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
        rows = [np.ctypeslib.as_array(pointer, shape=(self.rt.n_vocab,))]
        if constraint is not None and (opening := constraint.forced()):
            generated += opening
            forced += len(opening)
            history += opening
            rows = self._eval_rows(opening, len(opening) - 1)
        while len(generated) < budget:
            token = self.choose(rows.pop(0), constraint, threshold, verdicts, guard)
            if stop_at_eog and llama_cpp.llama_vocab_is_eog(self.rt.vocab, token):
                return generated, forced, True
            step_tokens = [token]
            if constraint is not None:
                constraint.consume(token)
                step_tokens += constraint.forced()
                forced += len(step_tokens) - 1
                if guard is not None and len(step_tokens) > 1:
                    guard.new_string()
            generated += step_tokens
            history += step_tokens
            if constraint is not None and constraint.finished:
                return generated, forced, True
            if len(step_tokens) == 1 and draft and draft[0] == token:
                draft.pop(0)  # the guess was right: its logits are the next row
                self.counts.accepted += 1
                continue
            llama.n_tokens -= len(draft)  # the wrong guess and those after it
            draft = lookup_draft(history, self.ngram, self.draft_tokens)
            self.counts.drafted += len(draft)
            rows = self._eval_rows(step_tokens + draft, len(step_tokens) - 1)
        llama.n_tokens -= len(draft)
        return generated, forced, False
