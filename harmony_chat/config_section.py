"""The base of every config file section: unknown keys are errors, docstrings are the docs.

TOML has real booleans, so ``max_tokens = true`` is a mistake, not the number 1 that pydantic's
lax mode would make of it: a number field refuses ``true`` and ``false`` (environment variables
stay strings and are still converted). TOML also has ``inf`` and ``nan``: no setting takes them.
"""

from __future__ import annotations

import types
import typing

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

_NUMBER_ERRORS = {
    int: ("int_type", "Input should be a valid integer"),
    float: ("float_type", "Input should be a valid number"),
}


def _number_kind(annotation: object) -> type | None:
    """``int`` or ``float`` when the field holds a number and never a boolean; else None."""
    if annotation is bool:
        return None
    if annotation in _NUMBER_ERRORS:
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        if bool not in options:
            return next((option for option in options if option in _NUMBER_ERRORS), None)
    return None


class Section(BaseModel):
    """A ``[section]`` of the config file."""

    model_config = ConfigDict(
        extra="forbid", use_attribute_docstrings=True, validate_default=False, allow_inf_nan=False
    )

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_numbers(cls, value: object, info: ValidationInfo) -> object:
        if isinstance(value, bool) and info.field_name is not None:
            kind = _number_kind(cls.model_fields[info.field_name].annotation)
            if kind is not None:
                raise PydanticCustomError(*_NUMBER_ERRORS[kind])
        return value
