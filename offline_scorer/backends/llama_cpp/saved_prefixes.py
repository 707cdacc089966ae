"""The KV state of prompt openings that recur across evaluations, kept to be read only once.

Within one evaluation the prompts share the source (or the summary) as a prefix, and the live
KV cache already holds it. Across evaluations one opening recurs that the cache has lost by
then: the explanation step's system message and task, the same for every evaluation (about
130 tokens, 1.5 s on the 1.5B judge). So the state of a prompt's first chunk is kept when it is
read, and put back when a later prompt opens with the same tokens.

Put back, it is the state reading it would give: the first chunk is read in one evaluation into
an empty cache either way (`prefill` makes chunks a function of the prompt alone), and llama.cpp
writes the cells back as they were (`llama_state_seq_set_data`), so the bytes of every answer
are unchanged (checked with the fixtures' cassette digest on the 1.5B judge). Kept per
sequence, so only the chunk's own KV cells are copied (a few MB), not the whole context.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

KEPT = 8
"""Openings kept, least recently used dropped first: the explanation step's, and those of
sources several rows share (a dev set has a few summaries per document)."""

_SEQUENCE = 0  # llama-cpp-python evaluates every prompt as sequence 0


class SavedPrefixes:
    """KV states of prompt openings, by their tokens."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        # the buffers llama.cpp wrote, kept as they are: set_data reads them back uncopied
        self._states: OrderedDict[tuple[int, ...], ctypes.Array[ctypes.c_uint8]] = OrderedDict()

    def save(self, llama: Any, opening: Sequence[int]) -> None:
        """Keep the cache's state, which holds exactly `opening`, just read."""
        import llama_cpp

        key = tuple(opening)
        if key in self._states:
            self._states.move_to_end(key)
            return
        ctx = llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, _SEQUENCE)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, _SEQUENCE)
        if written != size:
            return  # nothing kept: the opening is simply read again next time
        self._states[key] = buffer
        while len(self._states) > self.kept:
            self._states.popitem(last=False)

    def restore(self, llama: Any, opening: Sequence[int]) -> bool:
        """Put back the state of `opening` in an emptied cache (False: none is kept, and the
        cache is untouched, or llama.cpp refused it, and the cache is empty)."""
        import llama_cpp

        key = tuple(opening)
        state = self._states.get(key)
        if state is None:
            return False  # the cache is left as it is: the caller reads the opening into it
        self._states.move_to_end(key)
        llama.n_tokens = 0
        llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, state, len(state), _SEQUENCE) == 0:
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            return False
        llama.input_ids[: len(opening)] = opening
        llama.n_tokens = len(opening)
        return True
