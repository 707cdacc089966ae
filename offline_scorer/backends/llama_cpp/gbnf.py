"""JSON schema -> GBNF, for the small schema subset that `schemas.py` emits.

Why not llama.cpp's own converter: it lives inside llama-cpp-python, whose import loads the
native library, and `cassette upgrade` must compute the grammar text format-2 cassette keys
held on machines without that runtime. The subset is deliberately narrow; anything outside it
is a programming error, raised loudly rather than approximated.

Only a live llama.cpp judge compiles grammars now (cassette keys hold the schema), so what the
text of a schema's grammar is belongs to the backend's identity: this compiler's version,
`offline_scorer.formats.GBNF_COMPILER`, is part of its id: bump it with any change to that text.

The grammar admits compact JSON only (no whitespace), properties in declared order, so every
valid answer has exactly one spelling: output bytes stay stable.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

import msgpack

from offline_scorer.bytecache import BytesCache


class GrammarError(ValueError):
    """The schema uses a construct this generator does not support."""


_JSON = json.JSONEncoder(ensure_ascii=False)  # one instance: json.dumps builds one per call
_NO_CHARS_RE = re.compile(r"^\^\[\^([^\]\\]*)\]\*\$$")
# An anchored regex pattern of a string without length fields is compiled when it keeps to a
# small subset: positive classes, literal characters, non-capturing groups, alternation and
# the quantifiers {m,n} ? * +. Scorers' free text (whole sentences, see the summarization
# scorer's `sentence` module) is written in it. Characters JSON escapes are refused, since the
# rule spans the string's raw text.
_QUANTIFIER_RE = re.compile(r"\{(\d+)(,(\d*))?\}|[?*+]")
_REGEX_SPECIAL = frozenset("(){}[]|?*+^$.")
_NOT_IN_JSON_TEXT = frozenset('"\\') | frozenset(map(chr, range(0x20)))


_CONTROL_RE = re.compile(r"[\x00-\x1f]")
_CONTROL_ESCAPES = {
    **{code: f"\\x{code:02X}" for code in range(0x20)},
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
}


def _literal(text: str) -> str:
    """A GBNF string literal matching `text` exactly."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    if _CONTROL_RE.search(escaped):  # rare: JSON text, the usual input, has none
        escaped = escaped.translate(_CONTROL_ESCAPES)
    return '"' + escaped + '"'


class _Builder:
    def __init__(self) -> None:
        self.rules: dict[str, str] = {}

    def add(self, name: str, body: str) -> str:
        existing = self.rules.setdefault(name, body)
        if existing == body:
            return name
        index = 2  # the name is taken by a different body: number this one
        while f"{name}-{index}" in self.rules and self.rules[f"{name}-{index}"] != body:
            index += 1
        name = f"{name}-{index}"
        self.rules[name] = body
        return name

    def string(self, node: Mapping[str, Any], name: str) -> str:
        pattern = node.get("pattern")
        if pattern is not None and "minLength" not in node and "maxLength" not in node:
            try:
                body = _regex_rule(pattern)
            except GrammarError as error:
                raise GrammarError(f"{name}: {error}") from None
            # one rule per pattern: every reason of a schema shares it
            return self.add("text", f'"\\"" {body} "\\""')
        try:
            char_name, char_body, repeat = _string_rule(
                node.get("minLength", 0), node.get("maxLength"), node.get("pattern")
            )
        except GrammarError as error:
            raise GrammarError(f"{name}: {error}") from None
        char = self.add(char_name, char_body)
        return self.add(name, f'"\\"" {char}{repeat} "\\""')

    def array(self, node: Mapping[str, Any], name: str) -> str:
        if node.get("uniqueItems"):
            return self.subset(node, name)
        if "prefixItems" in node:
            if node.get("items", True) is not False:
                raise GrammarError(f"{name}: prefixItems need items: false")
            parts = [self.node(item, f"{name}-{i}") for i, item in enumerate(node["prefixItems"])]
            if not parts:
                return self.add(name, '"[]"')
            return self.add(name, '"[" ' + ' "," '.join(parts) + ' "]"')
        low = int(node.get("minItems", 0))
        high = node.get("maxItems")
        if high is None:
            raise GrammarError(f"{name}: arrays must carry maxItems (bounded decoding)")
        high = int(high)
        if high == 0:
            return self.add(name, '"[]"')
        item = self.node(node["items"], f"{name}-item")
        rest = f' ("," {item}){{{max(low - 1, 0)},{high - 1}}}' if high > 1 else ""
        body = f'"[" {item}{rest} "]"'  # GBNF rejects a {0,0} repetition
        if low == 0:
            body += ' | "[]"'
        return self.add(name, body)

    def subset(self, node: Mapping[str, Any], name: str) -> str:
        """Distinct items of an enum, in the enum's order: each set has one spelling.

        Rule `name-I-C` reads "C items taken, the next one comes from choice I on"; it either
        takes choice I, skips it, or closes the array. The rules grow with choices x maxItems.
        """
        choices = node.get("items", {}).get("enum")
        if not isinstance(choices, list) or len(set(map(_JSON.encode, choices))) != len(choices):
            raise GrammarError(f"{name}: uniqueItems needs items with an enum of distinct values")
        low, high = int(node.get("minItems", 0)), node.get("maxItems")
        if high is None:
            raise GrammarError(f"{name}: arrays must carry maxItems (bounded decoding)")
        high = min(int(high), len(choices))
        if low > high:
            raise GrammarError(f"{name}: minItems {low} exceeds the {high} items available")
        literals = [
            self.add(f"{name}-choice-{i}", _literal(_JSON.encode(choice)))
            for i, choice in enumerate(choices)
        ]

        def state(index: int, taken: int) -> str:
            rule = f"{name}-{index}-{taken}"
            if rule in self.rules:
                return rule
            self.rules[rule] = ""  # reserve the name: bodies refer to later states only
            options = ['"]"'] if taken >= low else []
            if index < len(choices) and taken < high:
                comma = '"," ' if taken else ""
                options.append(f"{comma}{literals[index]} {state(index + 1, taken + 1)}")
            if taken < high and index < len(choices) and len(choices) - index - 1 >= low - taken:
                options.append(state(index + 1, taken))
            self.rules[rule] = " | ".join(options)
            return rule

        return self.add(name, f'"[" {state(0, 0)}')

    def obj(self, node: Mapping[str, Any], name: str) -> str:
        if node.get("additionalProperties", True) is not False:
            raise GrammarError(f"{name}: objects must forbid additionalProperties")
        props = node.get("properties", {})
        required = node.get("required", [])
        if len(required) != len(props) or set(required) != props.keys():
            raise GrammarError(f"{name}: every property must be required")
        if not props:
            return self.add(name, '"{}"')
        parts = []
        for index, (key, sub) in enumerate(props.items()):
            head, suffix = _property(key, index == 0)
            parts.append(f"{head} {self.node(sub, name + suffix)}")
        return self.add(name, " ".join(parts) + ' "}"')

    def node(self, node: Mapping[str, Any], name: str) -> str:
        if "anyOf" in node:  # answers of different shapes (a reason that depends on the verdict)
            branches = [self.node(branch, f"{name}-{i}") for i, branch in enumerate(node["anyOf"])]
            return self.add(name, " | ".join(branches))
        if "const" in node:
            return self.add(name, _literal(_JSON.encode(node["const"])))
        if "enum" in node:
            return self.add(name, " | ".join(_literal(_JSON.encode(v)) for v in node["enum"]))
        kind = node.get("type")
        if kind == "object":
            return self.obj(node, name)
        if kind == "array":
            return self.array(node, name)
        if kind == "string":
            return self.string(node, name)
        if kind == "boolean":
            return self.add("boolean", '"true" | "false"')
        raise GrammarError(f"{name}: unsupported schema node {dict(node)!r}")


@functools.lru_cache(maxsize=64)
def _string_rule(low: int, high: int | None, pattern: str | None) -> tuple[str, str, str]:
    """(char rule name, char rule body, `{low,high}` repetition) for a string node.

    Cached by the node's bounds: coverage schemas repeat one string node per question, and
    replay compiles a new coverage grammar per evaluation.
    """
    if high is None:
        raise GrammarError("strings must carry maxLength (bounded decoding)")
    forbidden = ""
    if pattern is not None:
        match = _NO_CHARS_RE.match(pattern)
        if not match:
            raise GrammarError(f"unsupported pattern {pattern!r}")
        forbidden = match.group(1)
    return (
        f"char-no-{_rule_safe(forbidden)}" if forbidden else "char",
        f'[^"\\\\\\x00-\\x1F{forbidden}] | "\\\\" ["\\\\/nt]',
        f"{{{int(low)},{int(high)}}}",
    )


@functools.lru_cache(maxsize=64)
def _regex_rule(pattern: str) -> str:
    """The GBNF expression for an anchored pattern of the subset above."""
    if not (pattern.startswith("^") and pattern.endswith("$")) or pattern.endswith("\\$"):
        raise GrammarError(f"unsupported pattern {pattern!r}: it must be anchored with ^ and $")
    body = pattern[1:-1]
    expression, end = _alternatives(body, 0)
    if end != len(body):
        raise GrammarError(f"unsupported pattern {pattern!r}: unexpected {body[end]!r}")
    return expression


def _alternatives(text: str, at: int) -> tuple[str, int]:
    options = []
    while True:
        sequence, at = _sequence(text, at)
        options.append(sequence)
        if at < len(text) and text[at] == "|":
            at += 1
            continue
        return (options[0] if len(options) == 1 else " | ".join(options)), at


def _sequence(text: str, at: int) -> tuple[str, int]:
    items: list[str] = []
    literal = ""  # consecutive unquantified characters, emitted as one string literal
    while at < len(text) and text[at] not in "|)":
        atom, char, at = _atom(text, at)
        quantifier = _QUANTIFIER_RE.match(text, at)
        if char is not None and quantifier is None:
            literal += char
            continue
        if literal:
            items.append(_literal(literal))
            literal = ""
        if quantifier is not None:
            at = quantifier.end()
            if quantifier.group(0) == "{0,0}":
                continue  # zero repetitions: nothing to match (GBNF rejects {0,0})
            atom += quantifier.group(0)
        items.append(atom)
    if literal:
        items.append(_literal(literal))
    if not items:
        raise GrammarError("unsupported pattern: an empty alternative")
    return " ".join(items), at


def _atom(text: str, at: int) -> tuple[str, str | None, int]:
    """(GBNF for the atom at `at`, its character if it is a literal one, where it ends)."""
    char = text[at]
    if text.startswith("(?:", at):
        inner, end = _alternatives(text, at + 3)
        if end >= len(text) or text[end] != ")":
            raise GrammarError("unsupported pattern: an unclosed group")
        return f"({inner})", None, end + 1
    if char == "[":
        match = re.compile(r"\[((?:\\.|[^\]\\])+)\]", re.DOTALL).match(text, at)
        if match is None or match.group(1).startswith("^"):
            raise GrammarError("unsupported pattern: only positive character classes compile")
        return _char_class(match.group(1)), None, match.end()
    if char == "\\" and at + 1 < len(text) and text[at + 1] in _REGEX_SPECIAL | {"\\", "-", "/"}:
        char, end = text[at + 1], at + 2
    elif char in _REGEX_SPECIAL or char == "\\":
        raise GrammarError(f"unsupported pattern: {char!r} at {at}")
    else:
        end = at + 1
    if char in _NOT_IN_JSON_TEXT:
        raise GrammarError("a pattern may not admit quotes, backslashes or controls")
    return _literal(char), char, end


@functools.lru_cache(maxsize=256)
def _char_class(text: str) -> str:
    """A positive regex class body (`A-Z`, `\\-`, raw UTF-8) as a GBNF class of the same
    characters. They must be characters JSON text holds unescaped: the class spans the string."""
    tokens = re.findall(r"\\.|.", text, re.DOTALL)
    chars = [token[-1] for token in tokens]  # an escape stands for the character it escapes
    out = []
    index = 0
    while index < len(tokens):
        low = high = chars[index]
        if index + 2 < len(tokens) and tokens[index + 1] == "-":
            high = chars[index + 2]
            index += 3
        else:
            index += 1
        if low > high:
            raise GrammarError(f"character range {low!r}-{high!r} is reversed")
        if any(chr(c) in _NOT_IN_JSON_TEXT for c in range(ord(low), min(ord(high), 0x5C) + 1)):
            raise GrammarError("a pattern may not admit quotes, backslashes or controls")
        out.append(_class_char(low) if low == high else f"{_class_char(low)}-{_class_char(high)}")
    return "[" + "".join(out) + "]"


def _class_char(char: str) -> str:
    return f"\\x{ord(char):02X}" if char in "]-^[\\" else char


@functools.lru_cache(maxsize=1024)
def _property(key: str, first: bool) -> tuple[str, str]:
    """The literal that opens a property (`{"key":` or `,"key":`) and its rule-name suffix."""
    return _literal(("{" if first else ",") + json.dumps(key) + ":"), f"-{_rule_safe(key)}"


@functools.lru_cache(maxsize=1024)
def _rule_safe(text: str) -> str:
    safe = re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower()
    return safe or "x"


def schema_to_gbnf(schema: Mapping[str, Any]) -> str:
    """The GBNF text for `schema`; deterministic, one rule per line, `root` first."""
    builder = _Builder()
    top = builder.node(schema, "root")
    rules = {"root": top if top != "root" else builder.rules.pop("root"), **builder.rules}
    lines = [f"{name} ::= {body}" for name, body in rules.items()]
    return "\n".join(lines) + "\n"


_grammar_cache = BytesCache(256)


def request_grammar(schema: Mapping[str, Any] | None) -> str | None:
    """The GBNF a request's output schema compiles to.

    Cached by the schema's msgpack bytes (they keep key order, which orders the properties, and
    pack 4x faster than JSON): a live judge and `cassette upgrade` meet the same schemas again.
    A miss compiles the mapping itself, not the cache key read back.
    """
    if schema is None:
        return None
    cache_key = msgpack.packb(schema, use_bin_type=True)
    grammar = _grammar_cache.get(cache_key)
    if grammar is None:
        grammar = schema_to_gbnf(schema)
        _grammar_cache.put(cache_key, grammar)
    return grammar
