"""Prefill chunks are a function of the prompt alone, so a prompt's KV state never depends on
what the cache held before it (`offline_scorer/backends/llama_cpp/prefill.py`)."""

from __future__ import annotations

from offline_scorer.backends.llama_cpp.prefill import chunk_ends, reusable

# token ids standing for pieces of text
PIECES = {1: "Document", 2: ":\n", 3: "A", 4: " b", 5: ".\n\n", 6: "Task", 7: " c", 8: "?"}


def piece(token: int) -> str:
    return PIECES[token]


def test_chunks_end_after_each_paragraph_and_at_the_prompt_end():
    ends, settled = chunk_ends([1, 2, 3, 4, 5, 6, 7, 8], piece, limit=512)
    assert ends == [5, 8]
    assert settled == 5  # the last chunk ends at the prompt's end, not on a boundary


def test_a_paragraph_longer_than_the_limit_is_cut_from_its_start():
    ends, settled = chunk_ends([3, 4, 4, 4, 4, 5, 3, 4, 4], piece, limit=3)
    assert ends == [3, 6, 9]
    assert settled == 9  # the prompt ends exactly on a limit cut: a boundary


def test_a_prompt_shares_its_chunks_with_every_prompt_it_starts():
    question = [1, 2, 3, 4, 5, 6, 7, 8]
    claim = [1, 2, 3, 4, 5, 3, 4, 5, 6, 8]
    question_ends, _ = chunk_ends(question, piece, limit=512)
    claim_ends, _ = chunk_ends(claim, piece, limit=512)
    assert question_ends[:1] == claim_ends[:1] == [5]


def test_reuse_stops_at_the_last_whole_chunk_of_the_shared_prefix():
    ends = [5, 8, 12]
    assert reusable(ends, common=7) == 5  # mid-chunk: back to its start
    assert reusable(ends, common=8) == 8
    assert reusable(ends, common=12) == 8  # the last chunk is always evaluated (its logits)
    assert reusable(ends, common=4) == 0
