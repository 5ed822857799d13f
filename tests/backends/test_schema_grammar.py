"""A response format or tool schema is either enforced by a grammar or refused, naming the part: never half."""

from __future__ import annotations

import json
import re

import pytest

from harmony_chat.backends.schema_errors import UnenforceableSchema
from harmony_chat.backends.schema_grammar import check_enforceable, schema_grammar

REFUSED = [
    ({"not": {"type": "string"}}, "#/not", "'not'"),
    ({"type": "object", "properties": {"a": False}}, "#/properties/a", "'false'"),
    ({"type": "array", "items": False}, "#/items", "items: false"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}, "#/properties/a/$ref", "points to nothing"),
    ({"$ref": "https://example.com/schema.json"}, "#/$ref", "within the schema"),
    ({"type": "integer", "minimum": 1}, "#/minimum", "numeric bounds"),
    ({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, "#/uniqueItems", "uniqueItems"),
    ({"type": "object", "patternProperties": {"^a": {}}}, "#/patternProperties", "patternProperties"),
    ({"type": "string", "pattern": "^[^a]+$"}, "#/pattern", "negated classes"),
    ({"type": "string", "pattern": "^(?=a)b$"}, "#/pattern", "lookarounds"),
    ({"type": "string", "pattern": "a\\bc"}, "#/pattern", "\\b"),
    ({"type": "string", "pattern": "^a+$", "maxLength": 3}, "#/maxLength", "a length beside a pattern"),
    ({"type": "array", "minItems": 2}, "#/minItems", "need an items schema"),
    ({"anyOf": [{"type": "string"}], "minLength": 2}, "#/anyOf", "beside other constraints"),
    ({"type": "object", "properties": {}, "required": ["a"]}, "#/required", "a"),
    ({"type": "thing"}, "#/type", "unknown type"),
]


@pytest.mark.parametrize(("schema", "path", "reason"), REFUSED)
def test_what_the_grammar_cannot_enforce_is_refused_by_name(schema: dict[str, object], path: str, reason: str) -> None:
    with pytest.raises(UnenforceableSchema) as refused:
        check_enforceable(schema)
    assert refused.value.path == path and reason in refused.value.reason
    assert path in str(refused.value)


ENFORCED = [
    {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]},
    {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}}},
    {"$defs": {"P": {"type": "object", "properties": {"x": {"type": "number"}}}}, "$ref": "#/$defs/P"},
    {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}, "minItems": 400}}},
    {"type": "string", "format": "email", "title": "an annotation, not a constraint"},
    {"type": "string", "format": "date"},
    {"type": "string", "enum": ["a", "b"]},
    {"type": "object", "properties": {"a": True}},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
    {"type": "string", "pattern": "^\\d{3}-[a-z]+$"},
]


@pytest.mark.parametrize("schema", ENFORCED)
def test_what_the_grammar_enforces_gets_a_grammar_llama_cpp_parses(schema: dict[str, object]) -> None:
    grammar = schema_grammar(schema)
    assert grammar.startswith(("root ::=", "char ::=", "dot ::=", "space ::=")) or "\nroot ::= " in grammar


def test_a_json_string_holds_no_raw_control_character() -> None:
    grammar = schema_grammar({"type": "object", "properties": {"a": {"type": "string"}}})
    (char,) = [line for line in grammar.splitlines() if line.startswith("char ::= ")]
    assert "\\x00-\\x1F" in char  # llama-cpp-python's own rule lets raw tabs and newlines into strings


def test_an_unanchored_pattern_matches_anywhere_in_the_string_as_json_schema_says() -> None:
    """Pydantic writes Field(pattern="[a-z]+") as an unanchored pattern: search semantics, not a full match."""
    grammar = schema_grammar({"type": "string", "pattern": "[a-z]+"})
    assert re.search(r'root ::= "\\"" dot\* \(\[a-z\]\+\) dot\* "\\""', grammar), grammar
    (dot,) = [line for line in grammar.splitlines() if line.startswith("dot ::= ")]
    assert '"' in dot and "\\x00-\\x1F" in dot  # "." never writes a quote, a backslash or a control character


def test_the_same_schema_is_converted_once() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "string", "maxLength": 5}}}
    assert schema_grammar(schema) is schema_grammar(json.loads(json.dumps(schema)))


def test_a_schema_that_is_not_an_object_is_refused() -> None:
    schemas: tuple[object, ...] = (True, [], "string")
    for schema in schemas:
        with pytest.raises(UnenforceableSchema):
            check_enforceable(schema)
