"""Input fields that take exactly what the schema says.

Where an external id enters the API, in a path or a body, it is held to `rummy_ledger.ids`.

In a path, the `ext_id` converter: an id outside the alphabet matches no route (404 in the
envelope; `%00`, 65 characters, `..` all end there, before any view or query). In a body,
`ExternalIdField`: a 400 naming the field. OpenAPI shows both with the pattern and lengths
(`PATH_CONVERTER_OVERRIDES` in the settings, `extend_schema_field` here).

Strings, integers and booleans take their own JSON type only (`Strict*Field`), and every input
serializer is a `StrictSerializer`: a field it does not know is a 400 naming it.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.urls import register_converter
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from rummy_ledger import ids


class ExternalIdConverter:
    regex = ids.PATTERN

    def to_python(self, value: str) -> str:
        if not ids.is_external_id(value):
            raise ValueError(value)  # no match: the route does not exist for this id
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(ExternalIdConverter, "ext_id")


class _JsonType:
    """A field that takes exactly the JSON type its schema names. DRF would coerce: 5 to "5" for
    a string, "5" or 5.0 to 5 for an integer, 0 or "yes" to False or True for a boolean, and trim
    the spaces around a string; a client that sends those has a bug, and a money API should say
    so rather than guess."""

    json_types: tuple[type, ...] = ()
    json_kind = ""
    default_error_messages = {"json_type": "Expected a JSON {kind}, got {got}."}

    def to_internal_value(self, data):
        if not isinstance(data, self.json_types) or (
            isinstance(data, bool) and bool not in self.json_types
        ):
            self.fail("json_type", kind=self.json_kind, got=json_type_name(data))
        return super().to_internal_value(data)


def json_type_name(value) -> str:
    """The JSON type a parsed value came as (how the type errors name it)."""
    kinds = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}
    return "object" if isinstance(value, dict) else kinds.get(type(value), "null")


class _JsonString(_JsonType):
    json_types, json_kind = (str,), "string"

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)


class StrictCharField(_JsonString, serializers.CharField):
    pass


class StrictSlugField(_JsonString, serializers.SlugField):
    pass


class StrictIntegerField(_JsonType, serializers.IntegerField):
    json_types, json_kind = (int,), "integer"


class StrictBooleanField(_JsonType, serializers.BooleanField):
    json_types, json_kind = (bool,), "boolean"


def _external_id(value: str) -> None:
    if not ids.is_external_id(value):
        raise serializers.ValidationError(f"An id is {ids.RULE}.")


@extend_schema_field(ids.JSON_SCHEMA)
class ExternalIdField(StrictCharField):
    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", ids.MAX_LENGTH)
        super().__init__(**kwargs)
        self.validators.append(_external_id)


UNKNOWN_FIELD = "Unknown field: this operation does not take it."


class StrictSerializer(serializers.Serializer):
    """The base of every input serializer (nested ones included). DRF drops the fields a
    serializer does not declare: a misspelt `"regoin": "TN"` would be a deposit without a
    region, accepted. Here each unknown field is a 400 naming it, reported together with the
    known fields' own errors; a write that takes no body validates its body with this class."""

    default_error_messages = {"unknown": UNKNOWN_FIELD}

    def to_internal_value(self, data):
        unknown = sorted(set(data) - set(self.fields)) if isinstance(data, Mapping) else []
        refused = {name: [self.error_messages["unknown"]] for name in unknown}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if not refused:
                raise
            raise serializers.ValidationError({**exc.detail, **refused}) from exc
        if refused:
            raise serializers.ValidationError(refused)
        return value
