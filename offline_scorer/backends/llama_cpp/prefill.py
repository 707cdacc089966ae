"""Where a prompt is cut into the batches it is evaluated in: a function of the prompt alone.

On the Q4_K models (both Qwen judges) llama.cpp's arithmetic depends on how tokens are grouped
into evaluations: the same 500-token prompt read in one batch, or as 400 then 100, gives last
logits up to 0.5 apart (0.29 on the 0.5B; SmolLM2's Q4_1 is exact either way). Reusing the KV
cache of whatever the previous request shared would make a request's verdict probabilities
depend on the request before it, so a re-run with other workers, another order or `cassette
verify --live` would drift. Evaluating every prompt in the same chunks, and reusing the cache
only up to a chunk boundary that was itself evaluated as such a chunk, makes the state after a
prompt the same whatever came before (checked bit for bit on the 1.5B judge).

The chunks end after each token that ends a paragraph (its text ends in a blank line): the
scorer's prompts share "Document:\\n<source>\\n\\n" or "Summary:\\n<summary>\\n\\n" and differ
after it, so the shared part ends on a boundary and is reused whole. A paragraph longer than
the batch size is cut every `limit` tokens from its start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def ends_paragraph(piece: str) -> bool:
    """A token after which a chunk ends: its text closes a blank line."""
    return piece.endswith("\n\n")


def chunk_ends(
    tokens: Sequence[int], piece: Callable[[int], str], limit: int
) -> tuple[list[int], int]:
    """(the end of each chunk, the last being len(tokens); how many leading tokens lie in chunks
    that end on a boundary and so are evaluated alike in every prompt that starts with them)."""
    ends: list[int] = []
    start = 0
    for index, token in enumerate(tokens):
        if ends_paragraph(piece(token)) or index + 1 - start == limit:
            ends.append(index + 1)
            start = index + 1
    settled = ends[-1] if ends else 0
    if not ends or ends[-1] != len(tokens):
        ends.append(len(tokens))
    return ends, settled


def reusable(ends: Sequence[int], common: int) -> int:
    """How many leading tokens to keep from the cache: the last chunk end within the prefix the
    cache shares, before the prompt's last chunk (whose logits are needed)."""
    keep = 0
    for end in ends[:-1]:
        if end > common:
            break
        keep = end
    return keep
