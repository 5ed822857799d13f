"""Convert an MCP tool's JSON Schema into the subset that openai-harmony renders.

Harmony writes each function tool as a TypeScript-like type in the developer message. It knows
``type`` (including type lists), ``properties``/``required``, ``items``, string ``enum``,
``nullable``, ``oneOf``, ``description``, ``default`` and ``examples``. Everything else renders as
``any``: ``anyOf``, ``allOf``, ``$ref``, ``const``, non-string enums, and schemas without a type
(an untyped root loses every argument). ``to_harmony_parameters`` rewrites a schema into that
subset: ``$ref`` is inlined from ``$defs``/``definitions`` (recursion stops at the first repeat),
``anyOf`` becomes ``oneOf`` (or a type list, or the single non-null branch), ``allOf`` is merged,
missing types are inferred, and ``title`` and null defaults are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MAX_DEPTH = 24
"""Nesting deeper than this renders as ``any`` (guards against huge or cyclic schemas)."""
MAX_NODES = 2000
"""Schema nodes converted per tool; the rest render as ``any`` (guards against ``$ref`` fan-out)."""

_KEPT = ("type", "description", "properties", "required", "items", "enum", "default", "examples", "nullable", "oneOf")
_OBJECT_HINTS = ("properties", "required", "additionalProperties", "patternProperties", "minProperties")
_ARRAY_HINTS = ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains")
_STRING_HINTS = ("pattern", "format", "minLength", "maxLength")
_NUMBER_HINTS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")

Schema = dict[str, Any]


def to_harmony_parameters(schema: Mapping[str, Any] | None) -> Schema | None:
    """Convert a tool's input schema; None when the tool takes no arguments (renders ``() => any``)."""
    if not schema:
        return None
    converted = _Converter(schema).convert(schema, 0, ()) or {}
    if "type" not in converted and "oneOf" not in converted:
        converted["type"] = "object"
    if converted.get("type") == "object" and not converted.get("properties") and not schema.get("additionalProperties"):
        return None
    return converted


def _value_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _merge(into: Schema, other: Mapping[str, Any]) -> None:
    """Merge ``other`` into ``into`` for ``allOf``: properties and required add up, the rest fills gaps."""
    for key, value in other.items():
        if key == "properties" and isinstance(value, Mapping):
            into["properties"] = {**dict(into.get("properties") or {}), **value}
        elif key == "required" and isinstance(value, list):
            into["required"] = list(dict.fromkeys([*into.get("required", []), *value]))
        else:
            into.setdefault(key, value)


class _Converter:
    """One conversion: holds the root so ``$ref`` can be resolved against it."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root
        self._budget = MAX_NODES

    def _resolve(self, ref: str) -> Mapping[str, Any] | None:
        """Follow a local JSON pointer (``#/$defs/Name``); None when it leads nowhere."""
        if not ref.startswith("#"):
            return None
        node: Any = self._root
        for part in ref[1:].split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node if isinstance(node, Mapping) else None

    def convert(self, node: object, depth: int, refs: tuple[str, ...]) -> Schema | None:
        """Convert one schema node; None for the ``false`` schema (nothing is valid)."""
        self._budget -= 1
        if node is True or depth > MAX_DEPTH or self._budget < 0:
            return {}
        if not isinstance(node, Mapping):
            return None if node is False else {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._convert_ref(node, ref, depth, refs)
        if isinstance(node.get("allOf"), list):
            merged: Schema = {key: value for key, value in node.items() if key != "allOf"}
            for part in node["allOf"]:
                if not isinstance(part, Mapping):
                    continue
                part_ref = part.get("$ref")
                if isinstance(part_ref, str):
                    target = self._resolve(part_ref)
                    if part_ref in refs or target is None:
                        continue
                    refs = (*refs, part_ref)
                    part = {**target, **{key: value for key, value in part.items() if key != "$ref"}}
                _merge(merged, part)
            return self.convert(merged, depth + 1, refs)
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                return self._convert_union(node, key, depth, refs)
        return self._convert_plain(node, depth, refs)

    def _convert_ref(self, node: Mapping[str, Any], ref: str, depth: int, refs: tuple[str, ...]) -> Schema:
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        target = self._resolve(ref)
        if ref in refs or target is None:
            # A cycle or a dangling reference: keep what the siblings say, name the shape if we can.
            kind = {"type": "object"} if target is not None and "properties" in target else {}
            name = ref.rsplit("/", 1)[-1]
            described = siblings.get("description") or (f"A {name}, as above." if ref in refs else None)
            plain = self._convert_plain({**kind, **siblings}, depth, refs)
            if described:
                plain["description"] = described
            return plain
        merged = {**target, **siblings}
        return self.convert(merged, depth + 1, (*refs, ref)) or {}

    def _convert_union(self, node: Mapping[str, Any], key: str, depth: int, refs: tuple[str, ...]) -> Schema:
        base = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
        variants: list[Schema] = []
        nullable = bool(node.get("nullable"))
        for raw in node[key]:
            variant = self.convert(raw, depth + 1, refs)
            if variant is None:
                continue
            if variant.get("type") == "null":
                nullable = True
                continue
            variants.append(variant)
        result = self._convert_plain(base, depth, refs) if base else {}
        if not variants:
            result.setdefault("type", "null")
            return result
        if len(variants) == 1:
            merged = {**variants[0], **result}
            return self._with_null(merged) if nullable else merged
        if all(set(variant) == {"type"} for variant in variants):
            types: list[str] = []
            for variant in variants:
                types.extend(variant["type"] if isinstance(variant["type"], list) else [variant["type"]])
            result["type"] = _type_list(types)
            return self._with_null(result) if nullable else result
        result.pop("type", None)
        result["oneOf"] = variants
        if nullable:
            note = "May be null."
            result["description"] = f"{result['description']} {note}" if result.get("description") else note
        return result

    @staticmethod
    def _with_null(schema: Schema) -> Schema:
        kind = schema.get("type")
        if isinstance(kind, list):
            schema["type"] = kind if "null" in kind else [*kind, "null"]
        elif "oneOf" in schema:
            schema["description"] = f"{schema.get('description', '')} May be null.".strip()
        else:
            schema["nullable"] = True
        return schema

    def _convert_plain(self, node: Mapping[str, Any], depth: int, refs: tuple[str, ...]) -> Schema:
        result: Schema = {key: node[key] for key in _KEPT if key in node and key not in ("properties", "items")}
        if "default" in result and result["default"] is None:
            del result["default"]
        if "const" in node and "enum" not in result:
            result["enum"] = [node["const"]]
        if "enum" in result:
            self._fix_enum(result)
        kind = result.get("type")
        if isinstance(kind, list):
            result["type"] = _type_list(kind)
            if not result["type"]:
                del result["type"]
        elif kind is not None and kind not in _JSON_TYPES:
            del result["type"]
        if "type" not in result and (inferred := _infer_type(node)) is not None:
            result["type"] = inferred
        if isinstance(node.get("properties"), Mapping):
            properties: dict[str, Schema] = {}
            for name, child in node["properties"].items():
                converted = self.convert(child, depth + 1, refs)
                if converted is not None:
                    properties[str(name)] = converted
            result["properties"] = properties
            required = node.get("required")
            if isinstance(required, list):
                result["required"] = [name for name in required if name in properties]
        items = node.get("items", node.get("prefixItems"))
        if isinstance(items, Sequence) and not isinstance(items, str):
            items = {"anyOf": list(items)} if items else None
        if items is not None and items is not False:
            result["items"] = self.convert(items, depth + 1, refs) or {}
        return result

    @staticmethod
    def _fix_enum(result: Schema) -> None:
        """Harmony renders only string enums; others become a type plus a note in the description."""
        values = result["enum"] if isinstance(result["enum"], list) else []
        if None in values:
            values = [value for value in values if value is not None]
            result["nullable"] = True
        kinds = {_value_type(value) for value in values}
        if kinds == {"string"}:
            result["enum"] = values
            result.setdefault("type", "string")
            return
        del result["enum"]
        if len(kinds) == 1:
            result.setdefault("type", "number" if kinds == {"integer"} else next(iter(kinds)))
        if values:
            allowed = ", ".join(repr(value) if isinstance(value, str) else str(value) for value in values)
            note = f"One of: {allowed}."
            result["description"] = f"{result['description']} {note}" if result.get("description") else note


def _type_list(kinds: list[Any]) -> str | list[str]:
    """Known JSON types without repeats (``integer`` folds into ``number``); one type as a string."""
    known = [kind for kind in dict.fromkeys(kinds) if kind in _JSON_TYPES]
    if "integer" in known and "number" in known:
        known.remove("integer")
    return known[0] if len(known) == 1 else known


def _infer_type(node: Mapping[str, Any]) -> str | list[str] | None:
    """Guess a schema's type from its other keywords; None when nothing says."""
    if any(key in node for key in _OBJECT_HINTS):
        return "object"
    if any(key in node for key in _ARRAY_HINTS):
        return "array"
    if any(key in node for key in _STRING_HINTS):
        return "string"
    if any(key in node for key in _NUMBER_HINTS):
        return "number"
    return None
