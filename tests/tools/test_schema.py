"""JSON Schema -> harmony conversion: each rule, and every converted schema renders through openai-harmony."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai_harmony import HarmonyEncoding

from harmony_chat.tools.base import ToolSpec
from harmony_chat.tools.schema import MAX_DEPTH, to_harmony_parameters
from tests.tools.conftest import render_tools


def render(encoding: HarmonyEncoding, schema: dict[str, Any] | None, name: str = "f") -> str:
    parameters = to_harmony_parameters(schema)
    spec = ToolSpec(name=name, server="s", remote_name=name, description="d", parameters=parameters)
    return render_tools(encoding, [spec])


def keys_of(node: object) -> set[str]:
    """Every key used anywhere inside a converted schema (property names excluded)."""
    if isinstance(node, list):
        return set().union(*(keys_of(item) for item in node))
    if not isinstance(node, dict):
        return set()
    keys = set(node) | set().union(*(keys_of(value) for key, value in node.items() if key != "properties"))
    for child in (node.get("properties") or {}).values():
        keys |= keys_of(child)
    return keys


def field_line(rendered: str, field: str) -> str:
    match = re.search(rf"^{field}\??: ?(.*)$", rendered, re.MULTILINE)
    assert match is not None, rendered
    return match.group(1)


def test_no_or_empty_parameters_render_as_a_call_without_arguments(encoding: HarmonyEncoding) -> None:
    assert to_harmony_parameters(None) is None
    assert to_harmony_parameters({}) is None
    assert to_harmony_parameters({"type": "object", "properties": {}, "title": "noArgs"}) is None
    assert "type f = () => any;" in render(encoding, {"type": "object"})


def test_untyped_root_with_properties_becomes_an_object(encoding: HarmonyEncoding) -> None:
    schema = {"properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert "(_: any)" in render_tools(
        encoding, [ToolSpec(name="f", server="s", remote_name="f", description="d", parameters=schema)]
    )
    rendered = render(encoding, schema)
    assert "q: string," in rendered and "(_: any)" not in rendered


def test_untyped_fields_get_a_type_from_their_keywords(encoding: HarmonyEncoding) -> None:
    schema = {
        "type": "object",
        "properties": {
            "color": {"enum": ["red", "green"]},
            "fixed": {"const": "v1"},
            "pattern": {"pattern": "^a"},
            "count": {"minimum": 0},
            "things": {"items": {"type": "string"}},
            "nested": {"properties": {"deep": {"type": "boolean"}}},
            "free": {},
        },
    }
    rendered = render(encoding, schema)
    assert field_line(rendered, "color") == '"red" | "green",'
    assert field_line(rendered, "fixed") == '"v1",'
    assert field_line(rendered, "pattern") == "string,"
    assert field_line(rendered, "count") == "number,"
    assert field_line(rendered, "things") == "string[],"
    assert "deep?: boolean" in rendered
    assert field_line(rendered, "free") == "any,"


def test_any_of_becomes_one_of_a_type_list_or_a_nullable_type(encoding: HarmonyEncoding) -> None:
    schema = {
        "type": "object",
        "properties": {
            "simple": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"}]},
            "optional": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}], "default": None},
            "shapes": {
                "anyOf": [
                    {"type": "object", "properties": {"radius": {"type": "number"}}},
                    {"type": "array", "items": {"type": "string"}},
                ]
            },
        },
    }
    converted = to_harmony_parameters(schema)
    assert converted is not None
    properties = converted["properties"]
    assert properties["simple"] == {"type": ["string", "number"]}
    assert properties["optional"] == {"type": "string", "enum": ["a", "b"], "nullable": True}
    assert "anyOf" not in keys_of(converted) and len(properties["shapes"]["oneOf"]) == 2
    rendered = render(encoding, schema)
    assert field_line(rendered, "simple") == "string | number,"
    assert field_line(rendered, "optional") == '"a" | "b" | null,'
    assert "radius?: number" in rendered and "| string[]" in rendered
    assert "default: null" not in rendered


def test_refs_are_inlined_and_recursion_stops(encoding: HarmonyEncoding) -> None:
    schema = {
        "type": "object",
        "$defs": {
            "Node": {
                "title": "Node",
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
            },
            "Unit": {"type": "string", "enum": ["m", "km"]},
        },
        "properties": {
            "root": {"$ref": "#/$defs/Node"},
            "unit": {"$ref": "#/$defs/Unit", "description": "Length unit"},
            "broken": {"$ref": "#/$defs/Missing"},
            "remote": {"$ref": "https://example.com/schema.json"},
        },
    }
    converted = to_harmony_parameters(schema)
    assert converted is not None and not keys_of(converted) & {"$ref", "$defs"}
    assert converted["properties"]["unit"] == {"type": "string", "enum": ["m", "km"], "description": "Length unit"}
    rendered = render(encoding, schema)
    assert "name?: string" in rendered and '"m" | "km"' in rendered and "// Length unit" in rendered
    assert "Node, as above" in rendered
    assert field_line(rendered, "broken") == "any,"


def test_all_of_is_merged(encoding: HarmonyEncoding) -> None:
    schema = {
        "type": "object",
        "definitions": {"Base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
        "properties": {
            "item": {"allOf": [{"$ref": "#/definitions/Base"}, {"properties": {"tag": {"type": "string"}}}]},
        },
    }
    rendered = render(encoding, schema)
    assert "id: number," in rendered and "tag?: string," in rendered


def test_titles_and_null_defaults_are_dropped_other_defaults_kept() -> None:
    schema = {
        "title": "Args",
        "type": "object",
        "properties": {
            "a": {"title": "A", "type": "string", "default": None},
            "b": {"title": "B", "type": "integer", "default": 3},
        },
    }
    assert to_harmony_parameters(schema) == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer", "default": 3}},
    }


def test_non_string_enums_keep_their_values_in_the_description(encoding: HarmonyEncoding) -> None:
    schema = {"type": "object", "properties": {"level": {"enum": [1, 2, 3], "description": "How loud."}}}
    rendered = render(encoding, schema)
    assert "// How loud. One of: 1, 2, 3." in rendered and field_line(rendered, "level") == "number,"


def test_false_schemas_drop_the_field_and_depth_is_bounded(encoding: HarmonyEncoding) -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_DEPTH * 3):
        deep = {"type": "object", "properties": {"x": deep}}
    schema = {"type": "object", "properties": {"never": False, "deep": deep, "ok": True}}
    converted = to_harmony_parameters(schema)
    assert converted is not None and set(converted["properties"]) == {"deep", "ok"}
    assert "deep?:" in render(encoding, schema)


def test_reference_fan_out_is_bounded(encoding: HarmonyEncoding) -> None:
    # Each definition uses the next one eight times: inlining it all would build 8**30 nodes.
    defs: dict[str, Any] = {
        f"D{i}": {"type": "object", "properties": {f"p{k}": {"$ref": f"#/$defs/D{i + 1}"} for k in range(8)}}
        for i in range(30)
    }
    defs["D30"] = {"type": "string"}
    schema = {"type": "object", "$defs": defs, "properties": {"root": {"$ref": "#/$defs/D0"}}}
    converted = to_harmony_parameters(schema)
    assert converted is not None and "root?:" in render(encoding, schema)


JSON_TYPES = st.sampled_from(["string", "number", "integer", "boolean", "object", "array", "null", "bogus"])
LEAVES = st.one_of(
    st.fixed_dictionaries({"type": JSON_TYPES}),
    st.fixed_dictionaries({"enum": st.lists(st.one_of(st.text(max_size=5), st.integers(), st.none()), max_size=3)}),
    st.fixed_dictionaries({"const": st.one_of(st.text(max_size=5), st.integers())}),
    st.fixed_dictionaries({"$ref": st.sampled_from(["#/$defs/A", "#/$defs/Nope", "#", "#/properties/p0"])}),
    st.just({}),
    st.booleans(),
)


def _compound(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    names = st.sampled_from(["p0", "p1", "p2"])
    return st.one_of(
        st.fixed_dictionaries(
            {"properties": st.dictionaries(names, children, max_size=3)},
            optional={"type": st.just("object"), "required": st.lists(names, max_size=2), "title": st.text(max_size=4)},
        ),
        st.fixed_dictionaries({"items": children}, optional={"type": st.just("array")}),
        st.fixed_dictionaries({"anyOf": st.lists(children, max_size=3)}, optional={"default": st.none()}),
        st.fixed_dictionaries({"oneOf": st.lists(children, max_size=3)}),
        st.fixed_dictionaries({"allOf": st.lists(children, max_size=2)}),
        st.fixed_dictionaries({"type": st.lists(JSON_TYPES, max_size=3)}, optional={"nullable": st.booleans()}),
    )


SCHEMAS = st.recursive(LEAVES, _compound, max_leaves=12)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    properties=st.dictionaries(st.sampled_from(["p0", "p1", "p2"]), SCHEMAS, max_size=3),
    definition=SCHEMAS,
)
def test_any_schema_converts_and_renders(
    encoding: HarmonyEncoding, properties: dict[str, Any], definition: Any
) -> None:
    schema = {"type": "object", "properties": properties, "$defs": {"A": definition}}
    converted = to_harmony_parameters(schema)
    assert not keys_of(converted) & {"anyOf", "allOf", "$ref", "$defs", "title", "const"}
    rendered = render(encoding, schema)
    for name in (converted or {}).get("properties", {}):
        assert re.search(rf"^{name}\??:", rendered, re.MULTILINE), rendered


@pytest.mark.parametrize("name", ["get-weather", "fs.read", "9lives"])
def test_tool_names_need_no_schema_change(encoding: HarmonyEncoding, name: str) -> None:
    from harmony_chat.tools.naming import safe_name

    rendered = render(encoding, {"type": "object", "properties": {"q": {"type": "string"}}}, name=safe_name(name))
    assert re.search(r"type [A-Za-z_][A-Za-z0-9_]* = \(_: \{", rendered)
