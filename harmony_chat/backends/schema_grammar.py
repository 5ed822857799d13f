"""A JSON Schema as a grammar harmony-chat can enforce, or a clear refusal: never half of each.

A schema is turned into a GBNF grammar (llama.cpp's format) by llama-cpp-python's converter, after
:func:`check_enforceable` has made sure that every keyword that constrains the JSON is one the
grammar enforces. A schema with any other constraint (``not``, numeric bounds, ``uniqueItems``, a
``false`` subschema, a ``$ref`` to nothing, a pattern the grammar cannot express, ...) is refused
with :class:`~harmony_chat.backends.schema_errors.UnenforceableSchema`, which names the part and
why; the server answers that with a 400. Words that only describe (``title``, ``description``,
``examples``, an unknown ``format``) are left as they are.

The converter's own rules are tightened where they would let invalid JSON through: a string's
characters exclude raw control characters, and a pattern's ``.`` excludes the quote, the
backslash and control characters. A pattern is matched against the whole string (``^`` and
``$``); a pattern without them matches anywhere in it, as JSON Schema says, so it is written as
``^.*(pattern).*$``. The same grammar is used in process (llama.cpp) and sent to llama-server.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from harmony_chat.backends.llama_log import capture_llama_log
from harmony_chat.backends.schema_errors import UnenforceableSchema
from harmony_chat.backends.schema_pattern import written_pattern

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "example",
        "$schema",
        "$id",
        "$comment",
        "$anchor",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "discriminator",
        "nullable",
        "strict",
        "contentMediaType",
        "contentEncoding",
    }
)
"""Keywords that describe without constraining (``format`` is an annotation in JSON Schema 2019-09 and later)."""
DEFINITIONS = frozenset({"$defs", "definitions"})
ENFORCED = frozenset(
    {
        "type",
        "enum",
        "const",
        "$ref",
        "anyOf",
        "oneOf",
        "allOf",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
    }
)
"""The keywords the grammar enforces (with the limits :func:`check_enforceable` checks)."""
NOT_ENFORCED = {
    "not": "'not' cannot be written as a grammar",
    "if": "conditional subschemas (if/then/else) are not supported",
    "then": "conditional subschemas (if/then/else) are not supported",
    "else": "conditional subschemas (if/then/else) are not supported",
    "minimum": "numeric bounds are not enforced by the grammar",
    "maximum": "numeric bounds are not enforced by the grammar",
    "exclusiveMinimum": "numeric bounds are not enforced by the grammar",
    "exclusiveMaximum": "numeric bounds are not enforced by the grammar",
    "multipleOf": "multipleOf is not enforced by the grammar",
    "uniqueItems": "uniqueItems is not enforced by the grammar",
    "contains": "contains is not enforced by the grammar",
    "minContains": "minContains is not enforced by the grammar",
    "maxContains": "maxContains is not enforced by the grammar",
    "unevaluatedItems": "unevaluatedItems is not enforced by the grammar",
    "unevaluatedProperties": "unevaluatedProperties is not enforced by the grammar",
    "patternProperties": "patternProperties is not enforced by the grammar",
    "propertyNames": "propertyNames is not enforced by the grammar",
    "minProperties": "minProperties is not enforced by the grammar",
    "maxProperties": "maxProperties is not enforced by the grammar",
    "dependentRequired": "dependentRequired is not enforced by the grammar",
    "dependentSchemas": "dependentSchemas is not enforced by the grammar",
    "dependencies": "dependencies is not enforced by the grammar",
    "$dynamicRef": "$dynamicRef is not supported",
    "$recursiveRef": "$recursiveRef is not supported",
}
"""Keywords that constrain the JSON in ways the grammar cannot, each with the reason given back."""
TYPES = frozenset({"string", "number", "integer", "boolean", "null", "object", "array"})
_ENFORCED_FORMATS = frozenset({"date", "time", "date-time", "uuid"})
JSON_CHAR = r'[^"\\\x7F\x00-\x1F]'
"""A character a JSON string may hold unescaped (the C++ converter's rule)."""
_CHAR_RULE = JSON_CHAR + r' | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'


def check_enforceable(schema: object) -> None:
    """Check that every constraint of ``schema`` is one its grammar enforces.

    Raises:
        UnenforceableSchema: naming the first part that cannot be enforced, and why.
    """
    schema_grammar(schema)


def schema_grammar(schema: object) -> str:
    """The GBNF grammar (rule ``root``) of JSON that ``schema`` accepts, checked by llama.cpp's own parser.

    Raises:
        UnenforceableSchema: for a schema, or a part of one, the grammar cannot enforce.
    """
    if not isinstance(schema, Mapping):
        reason = "'true' allows anything" if schema is True else "a schema must be a JSON object"
        raise UnenforceableSchema("#", reason)
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError) as error:
        raise UnenforceableSchema("#", f"the schema is not JSON ({error})") from None
    found = _grammar(key)
    if isinstance(found, UnenforceableSchema):
        raise UnenforceableSchema(found.path, found.reason)
    return found


@functools.lru_cache(maxsize=256)
def _grammar(key: str) -> str | UnenforceableSchema:
    """The grammar of the schema written as ``key``, or why there is none (kept: servers see the same schemas)."""
    try:
        prepared = _Checker(json.loads(key)).prepared()
    except UnenforceableSchema as refusal:
        return refusal
    from llama_cpp.llama_grammar import SchemaConverter

    converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    try:
        resolved = converter.resolve_refs(prepared, "input")
        converter.visit(resolved, "")
        grammar = _tightened(str(converter.format_grammar()))
    except (AssertionError, KeyError, ValueError, TypeError, AttributeError, RecursionError) as error:
        return UnenforceableSchema("#", f"the grammar converter refused it ({error})")
    if not _parses(grammar):
        return UnenforceableSchema("#", "llama.cpp cannot parse the grammar written for it")
    return grammar


def _parses(grammar: str) -> bool:
    """Whether llama.cpp's grammar parser takes ``grammar`` (no model needed)."""
    import llama_cpp

    capture_llama_log(llama_cpp)  # a parse error is logged, not printed
    sampler = llama_cpp.llama_sampler_init_grammar(None, grammar.encode("utf-8"), b"root")
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


def unenforceable(schemas: Mapping[str, object]) -> dict[str, UnenforceableSchema]:
    """The schemas among ``schemas`` (by name) that the grammar cannot enforce, each with why."""
    refused: dict[str, UnenforceableSchema] = {}
    for name, schema in schemas.items():
        try:
            check_enforceable(schema)
        except UnenforceableSchema as error:
            refused[name] = error
    return refused


def _tightened(grammar: str) -> str:
    """Replace the converter's string and dot rules with ones that let no invalid JSON through."""
    lines = []
    for line in grammar.splitlines():
        name = line.split(" ::= ", 1)[0]
        if name == "char":
            line = f"char ::= {_CHAR_RULE}"
        elif name == "dot":
            line = f"dot ::= {JSON_CHAR}"
        lines.append(line)
    return "\n".join(lines) + "\n"


class _Checker:
    """Walks a schema, refusing what the grammar cannot enforce, and returns a copy the converter handles."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root

    def prepared(self) -> dict[str, Any]:
        copy = self._schema(self.root, "#")
        for key in DEFINITIONS:
            definitions = self.root.get(key)
            if isinstance(definitions, Mapping):
                copy[key] = {
                    name: self._schema(value, f"#/{key}/{_pointer(name)}") for name, value in definitions.items()
                }
        return copy

    def _schema(self, schema: object, path: str) -> dict[str, Any]:
        if schema is True:
            return {}  # anything: the grammar writes an object, which is one of the things allowed
        if schema is False:
            raise UnenforceableSchema(path, "a 'false' subschema allows nothing")
        if not isinstance(schema, Mapping):
            raise UnenforceableSchema(path, "a subschema must be a JSON object or a boolean")
        copy: dict[str, Any] = {}
        for key, value in schema.items():
            where = f"{path}/{_pointer(key)}"
            if key in NOT_ENFORCED:
                if key == "uniqueItems" and value is False:
                    continue
                raise UnenforceableSchema(where, NOT_ENFORCED[key])
            if key in DEFINITIONS and path != "#":
                raise UnenforceableSchema(where, "definitions are only read at the top of the schema")
            if key not in ENFORCED:
                continue  # an annotation, or a word JSON Schema ignores
            copy[key] = self._keyword(key, value, where, schema)
        if "format" in schema and schema["format"] in _ENFORCED_FORMATS and "pattern" not in schema:
            copy["format"] = schema["format"]
        self._check_combination(copy, path)
        return copy

    def _keyword(self, key: str, value: Any, where: str, schema: Mapping[str, Any]) -> Any:
        if key == "type":
            types = value if isinstance(value, list) else [value]
            if not types or any(kind not in TYPES for kind in types):
                raise UnenforceableSchema(where, f"unknown type {value!r}")
            return value
        if key in ("enum", "const"):
            if key == "enum" and (not isinstance(value, list) or not value):
                raise UnenforceableSchema(where, "enum must be a non-empty list")
            return value
        if key == "$ref":
            return self._ref(value, where)
        if key in ("anyOf", "oneOf", "allOf"):
            if not isinstance(value, list) or not value:
                raise UnenforceableSchema(where, f"{key} must be a non-empty list of subschemas")
            members = [self._schema(member, f"{where}/{index}") for index, member in enumerate(value)]
            if key == "allOf":
                self._check_all_of(value, where)
            return members
        if key == "properties":
            if not isinstance(value, Mapping):
                raise UnenforceableSchema(where, "properties must be an object")
            return {name: self._schema(member, f"{where}/{_pointer(name)}") for name, member in value.items()}
        if key == "required":
            if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
                raise UnenforceableSchema(where, "required must be a list of names")
            missing = [name for name in value if name not in (schema.get("properties") or {})]
            if missing and schema.get("additionalProperties") is False:
                raise UnenforceableSchema(where, f"required names no property: {', '.join(missing)}")
            if missing:
                raise UnenforceableSchema(where, f"a required property without a schema is not enforced: {missing[0]}")
            return value
        if key == "additionalProperties":
            return value if isinstance(value, bool) else self._schema(value, where)
        if key == "items":
            return self._items(value, where, schema)
        if key == "prefixItems":
            if not isinstance(value, list):
                raise UnenforceableSchema(where, "prefixItems must be a list of subschemas")
            return [self._schema(member, f"{where}/{index}") for index, member in enumerate(value)]
        if key in ("minItems", "maxItems", "minLength", "maxLength"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise UnenforceableSchema(where, f"{key} must be a whole number, 0 or more")
            return value
        if key == "pattern":
            return written_pattern(value, where)
        raise AssertionError(key)  # every ENFORCED keyword is handled above

    def _items(self, value: Any, where: str, schema: Mapping[str, Any]) -> Any:
        if value is False:
            if not schema.get("prefixItems"):
                raise UnenforceableSchema(where, "'items: false' without prefixItems allows only an empty array")
            return False
        if isinstance(value, list):
            return [self._schema(member, f"{where}/{index}") for index, member in enumerate(value)]
        if schema.get("prefixItems"):
            raise UnenforceableSchema(where, "items after prefixItems is not enforced by the grammar")
        return self._schema(value, where)

    def _ref(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.startswith("#"):
            raise UnenforceableSchema(where, "only references within the schema (#/...) are supported")
        target: Any = self.root
        for part in value[1:].split("/")[1:] if value != "#" else []:
            name = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or name not in target:
                raise UnenforceableSchema(where, f"the reference {value} points to nothing")
            target = target[name]
        if value == "#" or value.count("/") < 2 or value.split("/")[1] not in DEFINITIONS:
            raise UnenforceableSchema(where, "references must point into $defs or definitions")
        if not isinstance(target, Mapping | bool):
            raise UnenforceableSchema(where, f"the reference {value} does not point to a schema")
        return value

    def _check_all_of(self, members: list[Any], where: str) -> None:
        """Refuse an allOf the converter would not enforce (it merges plain object members' properties only)."""
        for index, member in enumerate(members):
            target = member
            if isinstance(member, Mapping) and "$ref" in member:
                target = self._resolve(member["$ref"])
            allowed = {"type", "properties", "required", "$ref"} | ANNOTATIONS
            if not isinstance(target, Mapping) or set(target) - allowed or target.get("type", "object") != "object":
                raise UnenforceableSchema(f"{where}/{index}", "allOf is enforced only for object schemas of properties")

    def _resolve(self, ref: str) -> Any:
        target: Any = self.root
        for part in ref[1:].split("/")[1:]:
            target = target[part.replace("~1", "/").replace("~0", "~")]
        return target

    def _check_combination(self, schema: Mapping[str, Any], path: str) -> None:
        """The converter reads some keywords instead of others: refuse a schema where it would drop one."""
        kind = schema.get("type")
        keys = set(schema) - {"format"}
        for key in ("$ref", "anyOf", "oneOf", "allOf"):
            if key in keys and keys - {key}:
                raise UnenforceableSchema(f"{path}/{key}", f"{key} beside other constraints is not enforced")
        for key in ("enum", "const"):
            if key in keys and keys - {key, "type"}:
                raise UnenforceableSchema(f"{path}/{key}", f"{key} beside constraints other than type is not enforced")
        if isinstance(kind, list) and keys - {"type"}:
            raise UnenforceableSchema(f"{path}/type", "a list of types beside other constraints is not enforced")
        lengths = "minLength" in keys or "maxLength" in keys
        if lengths and ("pattern" in keys or "format" in schema):
            raise UnenforceableSchema(f"{path}/maxLength", "a length beside a pattern or format is not enforced")
        if lengths and kind != "string":
            raise UnenforceableSchema(f"{path}/maxLength", "lengths are enforced on type string only")
        if ("minItems" in keys or "maxItems" in keys) and "items" not in keys:
            raise UnenforceableSchema(f"{path}/minItems", "item counts need an items schema to be enforced")


def _pointer(name: str) -> str:
    return str(name).replace("~", "~0").replace("/", "~1")
