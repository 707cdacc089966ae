"""The GBNF generator: literals that match their text exactly, and a cache that never confuses
two schemas (grammar text is part of every cassette key)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offline_scorer.backends.llama_cpp.gbnf import (
    GrammarError,
    _literal,
    request_grammar,
    schema_to_gbnf,
)
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.schemas import coverage_schema
from offline_scorer.scorers.summarization.sentence import GENERIC, sentence_pattern, vocabulary_of

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
    schema = coverage_schema(["Is it open?"], GENERIC)
    verdict = schema["properties"]["coverage"]["prefixItems"][0]
    swapped = {**verdict, "properties": dict(reversed(list(verdict["properties"].items())))}
    coverage = {**schema["properties"]["coverage"], "prefixItems": [swapped]}
    other = {**schema, "properties": {**schema["properties"], "coverage": coverage}}
    first, second = request_grammar(schema), request_grammar(other)
    assert first == schema_to_gbnf(schema) and second == schema_to_gbnf(other)
    assert first != second


def test_cached_grammar_is_the_generated_one_for_many_question_sets() -> None:
    for n in range(300):  # more than the cache holds, so entries are evicted and rebuilt
        questions = [f'Question {n}.{i} with "quotes" and \\ backslash?' for i in range(n % 5)]
        schema = coverage_schema(questions, GENERIC)
        assert request_grammar(schema) == schema_to_gbnf(schema)


_GBNF_TOKEN = re.compile(
    r'"((?:\\.|[^"\\])*)"|(\[(?:\\x[0-9A-F]{2}|[^\]])*\])|(\{\d+,\d*\}|[()|?*+])|\s+'
)


def _gbnf_as_regex(expression: str) -> str:
    """A GBNF expression of literals, classes, groups, | and quantifiers as a Python regex."""
    out = []
    for match in _GBNF_TOKEN.finditer(expression):
        literal, klass, operator = match.groups()
        if literal is not None:
            out.append(re.escape(_unescape_literal(f'"{literal}"')))
        elif klass is not None:
            out.append(
                re.sub(r"\\x([0-9A-F]{2})", lambda m: re.escape(chr(int(m.group(1), 16))), klass)
            )
        elif operator is not None:
            out.append("(?:" if operator == "(" else operator)
    assert "".join(m.group(0) for m in _GBNF_TOKEN.finditer(expression)) == expression
    return "".join(out)


_INPUTS = {
    "english": ("The crew left Port Alder.",),
    "cyrillic+cjk": ("Привет, мир.", "東京は大きい。"),
    "none": (),
}
_PROBES = [
    "The claim is supported.",
    "The source's crew left, on time; it was.",
    "Port Alder is named.",
    "The crew left port alder.",
    "It is. Then it was.",
    "The score is \u201d \u201d.",
    "The score is.",
    "the score.",
    "Two  spaces.",
    "A number 7.",
    "Ends with a comma,.",
    "The source says мир.",
    "Привет, мир.",
    "The claim is 東京は大きい.",
    "The crew left with ilk ible.",
    " ".join(["The"] * 20) + ".",
    " ".join(["The"] * 21) + ".",
]


@pytest.mark.parametrize("inputs", list(_INPUTS.values()), ids=list(_INPUTS))
def test_a_sentence_pattern_compiles_to_the_same_language(inputs: tuple[str, ...]) -> None:
    """The GBNF rule, read back as a regex, accepts exactly what the schema's pattern does."""
    pattern = sentence_pattern(20, vocabulary_of(*inputs))
    grammar = schema_to_gbnf({"type": "string", "pattern": pattern})
    rule = grammar.splitlines()[1]
    assert rule.startswith('text ::= "\\"" ') and rule.endswith(' "\\""')
    ours = re.compile(_gbnf_as_regex(rule.removeprefix('text ::= "\\"" ').removesuffix(' "\\""')))
    theirs = re.compile(pattern)
    for probe in _PROBES:
        assert bool(ours.fullmatch(probe)) == bool(theirs.fullmatch(probe)), probe
    assert theirs.fullmatch("The claim is supported.")
    assert not theirs.fullmatch("A number 7.") and not theirs.fullmatch(
        "The score is \u201d \u201d."
    )


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="Aab ,.;'-\u2019/7\u201d", max_size=40))
def test_the_compiled_sentence_rule_agrees_with_its_pattern(text: str) -> None:
    pattern = sentence_pattern(6, vocabulary_of("Ab bA A b."))
    rule = schema_to_gbnf({"type": "string", "pattern": pattern}).splitlines()[1]
    body = rule.removeprefix('text ::= "\\"" ').removesuffix(' "\\""')
    assert bool(re.fullmatch(_gbnf_as_regex(body), text)) == bool(re.fullmatch(pattern, text))


def test_patterns_outside_the_subset_are_refused_so_another_compiler_takes_them() -> None:
    for pattern in ("^[^0-9]{1,5}$", "^a.b$", "no anchors", '^say "hi"$', "^(a)$"):
        with pytest.raises(GrammarError):
            schema_to_gbnf({"type": "string", "pattern": pattern})
    schema = {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^[^0-9]*$"}
    assert "char-no-0-9{1,9}" in schema_to_gbnf(schema)  # the no-digits form, as before
    assert GENERIC.words == ()


@pytest.mark.parametrize("count", [0, 1, 2, 3])
def test_every_request_grammar_is_one_llguidance_accepts(count: int) -> None:
    """One claim means a one-item reasons list: GBNF has no `{0,0}` repetition to spell it."""
    llguidance = pytest.importorskip("llguidance")
    from offline_scorer.scorers.summarization.prompts import analyze_request, preprocess_request

    sentences = [f"The ferry left port number {word}." for word in ["one", "two", "three"]]
    source = "The ferry left port one, port two and port three on time with many passengers."
    claims = " ".join(sentences[:count])
    questions = [f"Is it true that the ferry left port {n}?" for n in range(count)]
    for style in ("sentences", "bounded"):
        for request in (
            preprocess_request(source, claims, 10, Asking.of(ScorerOptions(free_text=style))),
            analyze_request(claims, questions, style),
        ):
            grammar = request_grammar(request.output_schema)
            assert grammar is not None
            spec = llguidance.grammar_from("gbnf", grammar)
            assert llguidance.LLMatcher.validate_grammar(spec) == "", (style, request.step)
