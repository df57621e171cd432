"""JSON request bodies decoded strictly: each field exactly the JSON type its schema documents.

Litestar decodes a body to Python values, recursing without a depth limit of its own, and then
converts them leniently, so `"1"` and `100.0` pass as integers. Here the body must be a JSON
object, and each field of the handler's `data` class is decoded from its own JSON text with
msgspec in strict mode; nesting deeper than the interpreter's recursion limit is refused.
"""

from __future__ import annotations

import typing
from functools import cache

import attrs
import msgspec
from attrs import AttrsInstance

from skincare_http.connections import PlainRequest
from skincare_http.wire import FieldError

# (annotation with its constraints, required) per field, in declaration order.
Fields = dict[str, tuple[object, bool]]


class InvalidBody(Exception):
    """The body is not JSON, not an object, or has fields that do not match the schema."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in errors))
        self.errors = errors


class StrictJsonRequest(PlainRequest):
    """A request whose JSON body is decoded strictly against the handler's `data` class."""

    async def json(self) -> dict[str, object]:
        """The body's fields, decoded; Litestar builds the `data` value from them."""
        data = self.route_handler.parsed_data_field
        if data is None or not attrs.has(data.annotation):
            # Every body this API reads is declared as an attrs class.
            raise TypeError(f"{self.route_handler} reads a body it does not declare")
        return decode_fields(await self.body(), data.annotation)


def decode_fields(body: bytes, cls: type[AttrsInstance]) -> dict[str, object]:
    """The values of the attrs class `cls`'s fields in `body`; InvalidBody names each wrong one."""
    members = _members(body)
    values: dict[str, object] = {}
    errors: list[FieldError] = []
    for name, (annotation, required) in _fields(cls).items():
        if name not in members:
            if required:
                errors.append(FieldError(field=name, source="body", message="required"))
            continue
        try:
            values[name] = msgspec.json.decode(members[name], type=annotation, strict=True)
        except msgspec.ValidationError as error:
            errors.append(FieldError(field=name, source="body", message=str(error)))
    if errors:
        raise InvalidBody(errors)
    return values


def _members(body: bytes) -> dict[str, msgspec.Raw]:
    try:
        return msgspec.json.decode(body, type=dict[str, msgspec.Raw])
    except msgspec.ValidationError as error:
        raise _whole_body(str(error)) from None
    except msgspec.DecodeError as error:
        raise _whole_body(f"not JSON: {error}") from None
    except RecursionError:
        raise _whole_body("nested too deeply") from None


def _whole_body(message: str) -> InvalidBody:
    return InvalidBody([FieldError(field="body", source="body", message=message)])


@cache
def _fields(cls: type[AttrsInstance]) -> Fields:
    hints = typing.get_type_hints(cls, include_extras=True)
    return {
        field.name: (hints[field.name], field.default is attrs.NOTHING)
        for field in attrs.fields(cls)
    }
