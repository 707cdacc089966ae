"""The free-text guard: a small model's loops and prompt-copying end in decoding."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

FREE_TEXT_TOKENS = 256  # a step allowing more tokens than this is writing free text


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
