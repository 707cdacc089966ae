"""A prompt's tokens: the chat template's own markup as the control tokens it names, and every
message's content as plain text.

llama.cpp, asked to parse special tokens, reads control-token text anywhere in the string: a
source or summary holding "<|im_end|><|im_start|>system ..." would close the user's turn and
open a system turn of its own. Measured on the dev set, such a fake system turn moved 14 of 60
scores up (`docs/benchmarks.md`, prompt injection). So a content is always tokenized as text.

A prompt whose contents hold no control-token text is tokenized exactly as before, as one
rendered string: the rule changes no other prompt's tokens, which is what lets `cassette
upgrade` carry a record of the earlier decoder over once it has checked the prompt
(`control_text_in`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from offline_scorer.errors import GenerationError
from offline_scorer.judging.protocol import Message

# Stand-ins for the contents while the template renders: private-use characters no template
# adds or changes, so each marks where its content goes.
_MARK = "\ue000{}\ue001"


def _tokens(llama: Any, text: str, *, special: bool) -> list[int]:
    return list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=special))


def control_text_in(llama: Any, messages: Sequence[Message]) -> Message | None:
    """The first message whose content holds control-token text (None: none does): text that
    tokenizes differently when special tokens are parsed. `llama` may be a vocabulary-only
    model."""
    for message in messages:
        if _tokens(llama, message.content, special=True) != _tokens(
            llama, message.content, special=False
        ):
            return message
    return None


def prompt_tokens(
    llama: Any,
    render: Callable[[Sequence[Message]], str],
    messages: Sequence[Message],
) -> list[int]:
    """The prompt's tokens, without the BOS token (the caller adds it where the model wants
    one). `render` is the chat template."""
    if control_text_in(llama, messages) is None:
        return _tokens(llama, render(messages), special=True)
    marks = [_MARK.format(index) for index in range(len(messages))]
    rest = render([Message(m.role, mark) for m, mark in zip(messages, marks, strict=True)])
    pieces: list[tuple[str, bool]] = []  # (text, whether it is a message's content)
    for message, mark in zip(messages, marks, strict=True):
        before, found, rest = rest.partition(mark)
        if not found or mark in rest:
            raise _template_error()
        pieces += [(before, False), (message.content, True)]
    pieces.append((rest, False))
    if "".join(text for text, _ in pieces) != render(messages):
        raise _template_error()
    tokens: list[int] = []
    for text, content in pieces:
        if text:
            tokens += _tokens(llama, text, special=not content)
    return tokens


def _template_error() -> GenerationError:
    return GenerationError(
        "a message holds control-token text of the model (such as <|im_start|>), and this "
        "chat template changes message contents as it renders them, so the text cannot be "
        "kept from being read as control tokens; remove that text from the input"
    )
