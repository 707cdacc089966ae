"""The GBNF generator: literals that match their text exactly, and a cache that never confuses
two schemas (grammar text is part of every cassette key)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offline_scorer.backends.llama_cpp.gbnf import _literal, request_grammar, schema_to_gbnf
from offline_scorer.scorers.summarization.schemas import coverage_schema
from offline_scorer.scorers.summarization.sentence import LATIN, alphabet_of, sentence_pattern

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
    schema = coverage_schema(["Is it open?"], LATIN)
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
        schema = coverage_schema(questions, LATIN)
        assert request_grammar(schema) == schema_to_gbnf(schema)


def _class_chars(gbnf_class: str) -> re.Pattern[str]:
    """A GBNF character class read back as a Python regex class."""
    body = re.sub(r"\\x([0-9A-F]{2})", lambda m: re.escape(chr(int(m.group(1), 16))), gbnf_class)
    return re.compile(body)


@pytest.mark.parametrize(
    "inputs", [("Plain English.",), ("Привет, мир.", "東京は大きい。"), ("Ελλάδα και Κύπρος.",)]
)
def test_a_sentence_pattern_compiles_to_the_same_characters(inputs: tuple[str, ...]) -> None:
    """Each class of the GBNF rule admits exactly the characters of the regex class it came
    from, over the whole Basic Multilingual Plane; the repetition bound carries over."""
    pattern = sentence_pattern(100, alphabet_of(*inputs))
    grammar = schema_to_gbnf({"type": "string", "pattern": pattern})
    rule = grammar.splitlines()[1]
    assert rule.startswith("sentence ::= ") and "{0,98}" in rule
    gbnf_classes = re.findall(r"\[(?:\\x[0-9A-F]{2}|[^\]])*\]", rule)
    regex_classes = re.findall(r"\[(?:\\.|[^\]])*\]", pattern)
    assert len(gbnf_classes) == len(regex_classes) == 3
    for gbnf_class, regex_class in zip(gbnf_classes, regex_classes, strict=True):
        ours, theirs = _class_chars(gbnf_class), re.compile(regex_class)
        for code in range(0x10000):
            if 0xD800 <= code < 0xE000:
                continue
            char = chr(code)
            assert bool(ours.fullmatch(char)) == bool(theirs.fullmatch(char)), hex(code)
        assert not ours.search('"\\\x00\n0123456789')


def test_sentence_texts_keep_other_patterns_compiling_as_before() -> None:
    """The no-digits pattern (Mastra's free text) still compiles to its character rule."""
    schema = {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^[^0-9]*$"}
    assert "char-no-0-9{1,9}" in schema_to_gbnf(schema)
    assert LATIN.scripts == ()
