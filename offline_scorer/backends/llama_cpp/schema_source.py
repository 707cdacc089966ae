"""Which grammar a request's output schema is decoded under, and why a schema cannot be.

Two compilers, chosen by the schema alone (so a cassette key, which holds the schema, still
decides the grammar):

* Schemas our GBNF compiler (`gbnf`) accepts, which are every schema a scorer sends: bounded
  strings and arrays, closed objects, strings matching an anchored pattern of a small regex
  subset (a scorer's whole-sentence free text). Their grammar is pinned by
  `formats.GBNF_COMPILER` in the backend id, so it is the same on every machine. (Before the
  regex subset compiled here, a client's schema with such a pattern went to llguidance's
  compiler below: the same strings, the JSON around them possibly spaced differently.)
* Any other schema, as OpenAI-compatible clients send them (unbounded strings, optional
  properties): llguidance's own JSON-schema compiler, whose version is kept beside each
  recording. Before this path such schemas were refused, so no recorded key changes meaning.

A schema neither accepts is a `SchemaError` naming the construct, raised before any decoding.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from offline_scorer.backends.llama_cpp.gbnf import GrammarError, request_grammar
from offline_scorer.errors import SchemaError

__all__ = ["constraint_source", "schema_problem"]


def constraint_source(schema: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """(kind, text) of the grammar for `schema`: ("gbnf", GBNF) or ("json_schema", JSON)."""
    if schema is None:
        return None
    try:
        grammar = request_grammar(schema)
    except GrammarError:
        pass
    else:
        assert grammar is not None
        return "gbnf", grammar
    problem = _llguidance_problem(schema)
    if problem is not None:
        raise SchemaError(f"the output schema cannot be decoded under a constraint: {problem}")
    return "json_schema", json.dumps(schema, ensure_ascii=False)


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why `schema` cannot be decoded under a constraint (None: it can); needs no model."""
    try:
        constraint_source(schema)
    except SchemaError as error:
        return str(error)
    return None


def _llguidance_problem(schema: Mapping[str, Any]) -> str | None:
    import llguidance

    try:
        grammar = llguidance.grammar_from("json_schema", json.dumps(schema, ensure_ascii=False))
    except (ValueError, TypeError) as caught:
        return _one_line(str(caught))
    problem = llguidance.LLMatcher.validate_grammar(grammar)
    return _one_line(problem) if problem else None


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 200 else line[:197] + "..."
