"""A GGUF model's vocabulary alone (no weights): enough to tell how a prompt tokenizes, which is
what `cassette upgrade` and `cassette verify --live` must know to carry a record of an earlier
llama_cpp decoder over (`decoders.earlier_record_problem`)."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import sys
from collections.abc import Iterator
from typing import Any

from offline_scorer.backends.llama_cpp.prompt_tokens import control_text_in
from offline_scorer.errors import ConfigError, ModelError
from offline_scorer.judging.protocol import JudgeRequest
from offline_scorer.models.registry import ModelSpec


@functools.lru_cache(maxsize=4)
def _vocabulary(path: str) -> Any:
    try:
        import llama_cpp
    except ImportError:
        raise ConfigError(
            "upgrading records of an earlier llama_cpp backend reads the model's vocabulary "
            "to check each prompt's tokens, which needs llama-cpp-python: run scripts/setup"
        ) from None
    try:
        with _quiet_stderr():
            return llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as error:
        raise ModelError(f"cannot read the vocabulary of GGUF model {path}: {error}") from None


# Free a cached vocabulary before the interpreter tears its modules down: llama-cpp-python frees
# a model in `__del__`, which at that point finds its C functions gone and prints a traceback.
atexit.register(_vocabulary.cache_clear)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Standard error silenced, at the file-descriptor level and in Python (llama-cpp-python's
    log callback prints to sys.stderr): llama.cpp warns, past its verbose flag, that a
    vocabulary-only model has no training context, which is no news."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def control_text_problem(spec: ModelSpec, request: JudgeRequest) -> str | None:
    """Why a record of an earlier decoder (which read control-token text in contents as control
    tokens) may not stand for today's answer: its prompt holds such text (None: it does not,
    so both decoders see the same tokens)."""
    found = control_text_in(_vocabulary(str(spec.locate())), request.messages)
    if found is None:
        return None
    return (
        f"its {found.role} message holds text the model reads as a control token, which the "
        "backend now reads as plain text"
    )
