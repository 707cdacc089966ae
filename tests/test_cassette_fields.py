"""The key field table: the key, the record, misses and dumps all derive from `FIELDS`.

Key digests are pinned here: a change to the table that changes a key's bytes must fail a test,
because every committed cassette would stop replaying.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from offline_scorer.backends.llama_cpp.gbnf import request_grammar
from offline_scorer.cassette.fields import DUMPED, FIELDS, IdentityField, sampling_settings
from offline_scorer.cassette.key import KeyParts, key_parts
from offline_scorer.cassette.miss import differences, identity_differences
from offline_scorer.cassette.records import from_payload, to_payload
from offline_scorer.cassette.store import codec
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import CassetteFileError
from offline_scorer.judging.protocol import (
    Completion,
    JudgeIdentity,
    JudgeRequest,
    Message,
    SamplingSettings,
)

IDENTITY = JudgeIdentity("a" * 64, "b" * 64, "test-backend/1", 0.5)
REQUEST = JudgeRequest(
    step="preprocess",
    messages=(Message("system", "Be strict."), Message("user", "Is the sky green?")),
    output_schema={
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    },
    sampling=SamplingSettings(max_tokens=64, no_repeat_ngram=4, no_copy=("sky",)),
)


def _legacy(parts: KeyParts, key_format: int) -> KeyParts:
    """The parts as key format 1 or 2 had them: the grammar text in place of the schema."""
    grammar = request_grammar(REQUEST.output_schema)
    return dataclasses.replace(parts, key_format=key_format, grammar=grammar, schema=None)


def test_key_digests_are_pinned():
    parts = key_parts(REQUEST, IDENTITY)
    assert parts.key_format == 3 and parts.grammar is None
    assert parts.schema == (
        '{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],'
        '"additionalProperties":false}'
    )
    assert parts.digest().hex() == (
        "062a46137881fd27419598a437ac7f759ad50cc712c112cfb42495025b446808"
    )
    # format 2 keys hold the grammar text and format 1 keys leave the verdict threshold out too:
    # both digests are those earlier versions wrote, so old cassettes still verify
    assert _legacy(parts, 2).digest().hex() == (
        "6f18b7dc367adec02c9500c52e18498b563d92cfc037ce81377e515a069e16d2"
    )
    assert _legacy(parts, 1).digest().hex() == (
        "e8d3e18b31e507a479416b84c3ca225c790132818a127f7de742192ee22f9fb8"
    )


def test_the_schema_keeps_its_key_order_and_its_text():
    """Property order is answer order, so it is part of the key; text stays UTF-8."""
    swapped = {
        "type": "object",
        "properties": {"b": {"const": "é"}, "a": {"type": "boolean"}},
        "required": ["b", "a"],
        "additionalProperties": False,
    }
    reordered = {**swapped, "properties": dict(reversed(swapped["properties"].items()))}
    first = key_parts(dataclasses.replace(REQUEST, output_schema=swapped), IDENTITY)
    second = key_parts(dataclasses.replace(REQUEST, output_schema=reordered), IDENTITY)
    assert first.digest() != second.digest()
    assert first.schema is not None and '"b":{"const":"é"},"a"' in first.schema
    assert json.loads(first.schema) == swapped
    assert list(json.loads(first.schema)["properties"]) == ["b", "a"]
    unconstrained = dataclasses.replace(REQUEST, output_schema=None)
    assert key_parts(unconstrained, IDENTITY).schema is None


def test_a_record_holds_the_fields_of_its_own_format(tmp_path):
    parts = key_parts(REQUEST, IDENTITY)
    with CassetteFile(tmp_path / "c.oscas", create=True, writer="tests") as cas:
        for old in (_legacy(parts, 2), _legacy(parts, 1)):
            payload = to_payload(cas, REQUEST.step, old, Completion("{}"), {})
            assert "schema" not in payload["request"] and "grammar" in payload["request"]
            assert ("verdict_threshold" in payload["request"]) == (old.key_format == 2)
            cas.append_exchange(old.digest(), payload)
        back = [from_payload(cas, key, stored) for key, stored in cas.iter_exchanges()]
    assert [ex.parts for ex in back] == [
        _legacy(parts, 2),
        dataclasses.replace(_legacy(parts, 1), verdict_threshold=None),
    ]
    assert all(ex.parts.digest() == ex.key for ex in back)


def test_key_parts_are_the_table_in_order():
    assert [f.name for f in dataclasses.fields(KeyParts)] == [f.name for f in FIELDS]


def test_a_record_stores_exactly_the_key_fields_and_reads_them_back(tmp_path):
    parts = key_parts(REQUEST, IDENTITY)
    with CassetteFile(tmp_path / "c.oscas", create=True, writer="tests") as cas:
        payload = to_payload(cas, REQUEST.step, parts, Completion('{"ok":true}'), {})
        assert set(payload["request"]) == {f.name for f in FIELDS} - {"grammar"}
        assert payload["request"]["messages"][0]["content"] == codec.blob_key("Be strict.").hex()
        assert payload["request"]["schema"] == codec.blob_key(parts.schema).hex()
        cas.append_exchange(parts.digest(), payload)
        (key, stored), *_ = cas.iter_exchanges()
        exchange = from_payload(cas, key, stored)
    assert exchange.parts == parts and exchange.parts.digest() == key


_CHANGES = {
    "key_format": lambda value: 1,
    "model_sha256": lambda value: "c" * 64,
    "chat_template_sha256": lambda value: "d" * 64,
    "backend": lambda value: "other/2",
    "verdict_threshold": lambda value: 0.7,
    "messages": lambda value: (value[0], ("user", "Is the sky blue?")),
    "sampling": lambda value: tuple((k, 99 if k == "max_tokens" else v) for k, v in value),
    "grammar": lambda value: (value or "") + 'extra ::= "x"\n',
    "schema": lambda value: value.replace("boolean", "string"),
}


def _changed(parts: KeyParts, name: str) -> KeyParts:
    return dataclasses.replace(parts, **{name: _CHANGES[name](getattr(parts, name))})


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_a_miss_explains_a_change_in_every_key_field(field):
    parts = key_parts(REQUEST, IDENTITY)
    if not field.in_format(parts.key_format):
        parts = _legacy(parts, field.until or parts.key_format)
    changed = _changed(parts, field.name)
    assert changed.digest() != parts.digest()
    (line,) = differences(parts, changed)
    assert line.startswith(field.label)


def test_miss_wording_per_kind_of_field():
    parts = key_parts(REQUEST, IDENTITY)

    def diff(name):
        return differences(parts, _changed(parts, name))[0]

    assert diff("key_format") == "key format: recorded 3 vs now 1"
    assert diff("model_sha256") == (
        "model: recorded sha256 aaaaaaaaaaaaaaaa... vs now cccccccccccccccc..."
    )
    assert diff("verdict_threshold") == "verdict threshold: recorded 0.5 vs now 0.7"
    assert diff("messages") == (
        "prompt: message 2 (user) first differs at character 11: "
        "recorded 'Is the sky green?' vs now 'Is the sky blue?'"
    )
    assert diff("sampling") == "settings: max_tokens recorded 64 vs now 99"
    assert diff("schema") == (
        "output schema first differs at character 45: recorded "
        + repr('...","properties":{"ok":{"type":"boolean"}},"required":["ok"],"...')
        + " vs now "
        + repr('...","properties":{"ok":{"type":"string"}},"required":["ok"],"a...')
    )


def test_identity_differences_count_only_fields_of_the_records_format():
    parts = key_parts(REQUEST, IDENTITY)
    assert identity_differences(parts, IDENTITY) == []
    other = dataclasses.replace(IDENTITY, backend="other/2", verdict_threshold=0.7)
    assert identity_differences(parts, other) == [
        "backend: recorded 'test-backend/1' vs now 'other/2'",
        "verdict threshold: recorded 0.5 vs now 0.7",
    ]
    old = dataclasses.replace(parts, key_format=1, verdict_threshold=None)
    assert identity_differences(old, IDENTITY) == []
    assert {f.name for f in FIELDS if isinstance(f, IdentityField)} == {
        f.name for f in dataclasses.fields(JudgeIdentity)
    }


def test_dump_columns_are_the_short_fields_then_the_texts():
    assert [f.name for f in DUMPED] == [
        "model_sha256",
        "chat_template_sha256",
        "backend",
        "verdict_threshold",
        "sampling",
        "messages",
        "grammar",
        "schema",
    ]


def test_a_malformed_request_field_is_named(tmp_path):
    parts = key_parts(REQUEST, IDENTITY)
    with CassetteFile(tmp_path / "c.oscas", create=True, writer="tests") as cas:
        payload = to_payload(cas, REQUEST.step, parts, Completion("{}"), {})
        key = parts.digest()
        for change, problem in [
            (lambda r: r.pop("backend"), "request has no 'backend'"),
            (lambda r: r.update(verdict_threshold=1), "request.verdict_threshold has the wrong"),
            (lambda r: r.update(key_format=True), "request.key_format has the wrong type"),
            (lambda r: r.update(schema="ab" * 32), "references blob abababababababab"),
            (lambda r: r.update(schema=7), "request.schema has the wrong type"),
            (lambda r: r["messages"][0].pop("role"), "message has no 'role'"),
        ]:
            broken = {**payload, "request": {**payload["request"]}}
            broken["request"]["messages"] = [dict(m) for m in payload["request"]["messages"]]
            change(broken["request"])
            with pytest.raises(CassetteFileError, match="malformed exchange record: exchange"):
                from_payload(cas, key, broken)
            with pytest.raises(CassetteFileError) as caught:
                from_payload(cas, key, broken)
            assert problem in str(caught.value)


@pytest.mark.parametrize(
    "sampling",
    [
        SamplingSettings(),
        SamplingSettings(max_tokens=64, no_repeat_ngram=4, no_copy=("a b",), cut_at_limit=True),
        SamplingSettings(verdict_threshold=0.5),
    ],
    ids=["defaults", "free-text-guard", "request-threshold"],
)
def test_recorded_sampling_gives_back_settings_that_key_the_same(sampling):
    """`cassette verify --live` re-runs an exchange from its recorded sampling: every setting
    that is in the key must come back, or the re-run asks another question (a coverage question
    recorded at its own threshold 0.5 was re-run at the judge's)."""
    recorded = tuple(sorted(sampling.normalized().items()))
    assert sampling_settings(recorded).normalized() == sampling.normalized()
