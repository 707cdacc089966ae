"""The schema's canonical text is exactly `json.dumps(..., ensure_ascii=False, separators=...)`,
whichever encoder wrote it: the fast path must never change a key."""

from __future__ import annotations

import json
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offline_scorer.cassette import schema as schema_module
from offline_scorer.cassette.schema import canonical_schema


def reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


_keys = st.one_of(
    st.text(),
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
)
_leaves = st.one_of(
    st.text(),  # every code point, lone surrogates included
    st.integers(-(2**70), 2**70),  # past 64 bits too
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),
)
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_keys, inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(), _values, max_size=5))
def test_canonical_text_is_the_standard_librarys(value):
    schema_module._cache.clear()
    first = canonical_schema(value)
    assert first == reference(value)
    assert canonical_schema(value) == first  # and again, from the cache


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), st.text() | st.integers(-(2**63), 2**64 - 1), max_size=8))
def test_plain_values_take_the_fast_path(value):
    """Most plain values do (text holding msgpack's marker bytes may not, and need not)."""
    calls = []
    original = schema_module.pydantic_core.to_json

    def spy(arg):
        calls.append(arg)
        return original(arg)

    schema_module._cache.clear()
    schema_module.pydantic_core.to_json = spy
    try:
        assert canonical_schema(value) == reference(value)
    finally:
        schema_module.pydantic_core.to_json = original
    marked = set(schema_module._NOT_PLAIN) & set(msgpack.packb(value, use_bin_type=True))
    assert bool(calls) == (not marked)


def test_what_json_refuses_is_refused():
    for bad in ({"x": {1, 2}}, {"x": b"raw"}, {(1, 2): 1}, {"x": float("nan")}):
        with pytest.raises((TypeError, ValueError)):
            canonical_schema(bad)
    assert canonical_schema(None) is None
