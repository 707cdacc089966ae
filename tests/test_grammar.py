"""The GBNF generator: literals that match their text exactly, and a cache that never confuses
two schemas (grammar text is part of every cassette key)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from offline_scorer.backends.llama_cpp.gbnf import _literal, request_grammar, schema_to_gbnf
from offline_scorer.scorers.summarization.schemas import coverage_schema

_ESCAPE = re.compile(r'\\(x[0-9A-F]{2}|[nrt"\\])')
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


def _unescape_literal(literal: str) -> str:
    """What a GBNF string literal matches, read the way llama.cpp's parser reads it."""
    assert literal[0] == literal[-1] == '"'
    body = literal[1:-1]
    assert not re.search(r'(?<!\\)(?:\\\\)*"', body), "unescaped quote inside a literal"
    return _ESCAPE.sub(
        lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == "x" else _SIMPLE[m.group(1)],
        body,
    )


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_literal_matches_exactly_its_text(text: str) -> None:
    literal = _literal(text)
    assert _unescape_literal(literal) == text
    assert not re.search(r"[\x00-\x1f]", literal)  # one rule per line stays one line


def test_cache_tells_apart_schemas_that_differ_only_in_property_order() -> None:
    schema = coverage_schema(["Is it open?"])
    verdict = schema["properties"]["coverage"]["prefixItems"][0]
    swapped = {**verdict, "properties": dict(reversed(list(verdict["properties"].items())))}
    other = {
        **schema,
        "properties": {"coverage": {**schema["properties"]["coverage"], "prefixItems": [swapped]}},
    }
    first, second = request_grammar(schema), request_grammar(other)
    assert first == schema_to_gbnf(schema) and second == schema_to_gbnf(other)
    assert first != second


def test_cached_grammar_is_the_generated_one_for_many_question_sets() -> None:
    for n in range(300):  # more than the cache holds, so entries are evicted and rebuilt
        questions = [f'Question {n}.{i} with "quotes" and \\ backslash?' for i in range(n % 5)]
        schema = coverage_schema(questions)
        assert request_grammar(schema) == schema_to_gbnf(schema)
