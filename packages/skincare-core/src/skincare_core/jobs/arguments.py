"""Typed job arguments on the wire: one cattrs converter between an attrs class of arguments and
a job's JSON payload.

Supported field types: int, str, bool, Decimal (as its string, finite only), date
(`YYYY-MM-DD`), aware datetime (ISO 8601 with its offset; a naive one is refused), UUID (its
string), enums (their value), tuples (`tuple[X, ...]` and fixed ones, as arrays), nested attrs
classes, and `X | None` of any of them. The converter is strict both ways: a bool is not an int,
a string is not a number or a tuple, a field the class lacks is an error. `unstructure` checks
the arguments by structuring what it wrote back, so what is enqueued is what a worker reads;
either side's failure names the field (`order_id: expected an integer, got bool`).
"""

from __future__ import annotations

import enum
import re
import typing
from collections.abc import Callable, Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import TypeVar
from uuid import UUID

import attrs
from cattrs import Converter, transform_error
from cattrs.gen import make_dict_structure_fn
from cattrs.v import format_exception

from skincare_core.jobs.job import JsonValue, Payload

A = TypeVar("A")
Upgrade = Callable[[Payload], Payload]
"""Rewrites a payload written by an older release into the current form (see `legacy_digits`)."""

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class ArgumentError(ValueError):
    """Arguments that do not fit their class; `reasons` are `field: what is wrong` lines."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def _kind(value: object) -> str:
    return type(value).__name__


def _expect(value: object, wanted: type, name: str) -> None:
    # `type(...) is`, not isinstance: a bool is an int to Python, never to a job's arguments.
    if type(value) is not wanted:
        raise TypeError(f"expected {name}, got {_kind(value)}")


def _structure_int(value: object, _: object) -> int:
    _expect(value, int, "an integer")
    return typing.cast(int, value)


def _structure_bool(value: object, _: object) -> bool:
    _expect(value, bool, "a boolean")
    return typing.cast(bool, value)


def _structure_str(value: object, _: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {_kind(value)}")
    return value


def _structure_decimal(value: object, _: object) -> Decimal:
    text = _structure_str(value, None)
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"expected a decimal number as a string, got {text!r}") from None
    if not number.is_finite():
        raise ValueError(f"expected a finite decimal, got {text!r}")
    return number


def _unstructure_decimal(value: Decimal) -> str:
    if not isinstance(value, Decimal) or not value.is_finite():
        raise ValueError(f"expected a finite Decimal, got {value!r}")
    return str(value)


def _structure_date(value: object, _: object) -> date:
    text = _structure_str(value, None)
    if not _DATE.fullmatch(text):
        raise ValueError(f"expected a date as YYYY-MM-DD, got {text!r}")
    return date.fromisoformat(text)


def _unstructure_date(value: date) -> str:
    # A datetime is a date to Python; as a date argument its time would be lost.
    _expect(value, date, "a date")
    return value.isoformat()


def _structure_datetime(value: object, _: object) -> datetime:
    text = _structure_str(value, None)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"expected an ISO 8601 time, got {text!r}") from None
    if moment.utcoffset() is None:
        raise ValueError(f"expected a time with its UTC offset, got {text!r}")
    return moment


def _unstructure_datetime(value: datetime) -> str:
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise ValueError(f"expected an aware datetime, got {value!r}")
    return value.isoformat()


def _structure_uuid(value: object, _: object) -> UUID:
    text = _structure_str(value, None)
    try:
        return UUID(text)
    except ValueError:
        raise ValueError(f"expected a UUID, got {text!r}") from None


def _is_enum(kind: object) -> bool:
    return isinstance(kind, type) and issubclass(kind, enum.Enum)


def _is_tuple(kind: object) -> bool:
    return typing.get_origin(kind) is tuple


def _tuple_items(kind: object, length: int) -> list[object]:
    """The type of each of `length` items of the tuple type `kind`."""
    params = list(typing.get_args(kind))
    if len(params) == 2 and params[1] is Ellipsis:
        return [params[0]] * length
    if len(params) != length:
        raise ValueError(f"expected {len(params)} items, got {length}")
    return params


def _tuple_structure(kind: object) -> Callable[[object, object], tuple[object, ...]]:
    def structure(value: object, _: object) -> tuple[object, ...]:
        # A string is iterable: without this check "abc" would become ("a", "b", "c").
        if not isinstance(value, list):
            raise TypeError(f"expected an array, got {_kind(value)}")
        items = zip(value, _tuple_items(kind, len(value)), strict=True)
        return tuple(_item(converter.structure, n, v, t) for n, (v, t) in enumerate(items))

    return structure


def _tuple_unstructure(kind: object) -> Callable[[object], list[object]]:
    def unstructure(value: object) -> list[object]:
        if not isinstance(value, tuple):
            raise TypeError(f"expected a tuple, got {_kind(value)}")
        items = zip(value, _tuple_items(kind, len(value)), strict=True)
        return [_item(converter.unstructure, n, v, t) for n, (v, t) in enumerate(items)]

    return unstructure


def _item(
    convert: Callable[[object, type], object], index: int, value: object, kind: object
) -> object:
    try:
        return convert(value, typing.cast(type, kind))
    except Exception as exc:
        raise ValueError(f"item {index}: {'; '.join(_reasons(exc))}") from None


class _FieldError(ValueError):
    """A value that cannot be unstructured, and the dotted path of its field."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def _attrs_unstructure(kind: type) -> Callable[[object], dict[str, object]]:
    # cattrs' own unstructuring names no field when a value fails: this one does.
    fields = [(f.name, f.type) for f in attrs.fields(attrs.resolve_types(kind))]

    def unstructure(value: object) -> dict[str, object]:
        payload: dict[str, object] = {}
        for name, field_type in fields:
            try:
                payload[name] = converter.unstructure(getattr(value, name), field_type)
            except _FieldError as exc:
                raise _FieldError(f"{name}.{exc.path}", exc.message) from None
            except Exception as exc:
                raise _FieldError(name, str(exc)) from None
        return payload

    return unstructure


def _attrs_structure(kind: type) -> Callable[[object, object], object]:
    generated: Callable[[Mapping[str, object], type], object]
    generated = make_dict_structure_fn(kind, converter)

    def structure(value: object, _: object) -> object:
        if not isinstance(value, dict):
            raise TypeError(f"expected an object, got {_kind(value)}")
        return generated(value, kind)

    return structure


def _structure_enum(value: object, kind: type[enum.Enum]) -> enum.Enum:
    # An IntEnum is an int to Python: without this hook the int hook would take its fields.
    if type(value) is not str and type(value) is not int:
        raise TypeError(f"expected a value of {kind.__name__}, got {_kind(value)}")
    return kind(value)


def _unstructure_enum(value: enum.Enum) -> JsonValue:
    raw = value.value
    if not isinstance(raw, str | int):
        raise TypeError(f"enum {type(value).__name__} values must be strings or integers")
    return raw


def _make_converter() -> Converter:
    made = Converter(forbid_extra_keys=True)
    for kind, structure in (
        (int, _structure_int),
        (bool, _structure_bool),
        (str, _structure_str),
        (Decimal, _structure_decimal),
        (date, _structure_date),
        (datetime, _structure_datetime),
        (UUID, _structure_uuid),
    ):
        made.register_structure_hook(kind, structure)
    made.register_unstructure_hook(Decimal, _unstructure_decimal)
    made.register_unstructure_hook(date, _unstructure_date)
    made.register_unstructure_hook(datetime, _unstructure_datetime)
    made.register_unstructure_hook(UUID, str)
    is_enum = _is_enum
    made.register_unstructure_hook_func(is_enum, _unstructure_enum)
    # Directly per class, not by predicate: an IntEnum's int base would otherwise win.
    made.register_structure_hook_factory(is_enum, lambda t: _structure_enum)
    for base in (enum.Enum, enum.IntEnum, enum.StrEnum):
        made.register_structure_hook(base, _structure_enum)
        made.register_unstructure_hook(base, _unstructure_enum)
    made.register_structure_hook_factory(attrs.has, _attrs_structure)
    made.register_structure_hook_factory(_is_tuple, _tuple_structure)
    made.register_unstructure_hook_factory(_is_tuple, _tuple_unstructure)
    made.register_unstructure_hook_factory(attrs.has, _attrs_unstructure)
    return made


converter = _make_converter()
"""The one converter between job arguments and their JSON payloads."""


def _reasons(exc: BaseException) -> list[str]:
    """`field: what is wrong` for each failure cattrs found, the field as a dotted path."""
    lines = transform_error(exc, format_exception=_describe)
    return [_field_first(line) for line in lines]


def _describe(exc: BaseException, kind: type | None) -> str:
    if isinstance(exc, TypeError | ValueError) and not isinstance(exc, KeyError):
        return str(exc)
    return format_exception(exc, kind)


def _field_first(line: str) -> str:
    message, _, path = line.rpartition(" @ $")
    path = path.lstrip(".")
    return f"{path}: {message}" if path else message


def unstructure(args: object, kind: type[A]) -> dict[str, JsonValue]:
    """The payload of `args`, an instance of the attrs class `kind`; `ArgumentError` naming
    each field that cannot travel (a naive datetime, a bool where an int belongs, ...)."""
    if type(args) is not kind:
        raise ArgumentError([f"expected arguments of class {kind.__name__}, got {_kind(args)}"])
    try:
        payload = converter.unstructure(args, kind)
    except _FieldError as exc:
        raise ArgumentError([str(exc)]) from None
    try:
        # Read back as a worker will: whatever would not decode fails here, before any I/O.
        converter.structure(payload, kind)
    except Exception as exc:
        raise ArgumentError(_reasons(exc)) from None
    return typing.cast(dict[str, JsonValue], payload)


def structure(payload: Payload, kind: type[A]) -> A:
    """The arguments of class `kind` a payload holds; `ArgumentError` naming each missing,
    extra or mistyped field."""
    try:
        return converter.structure(payload, kind)
    except Exception as exc:
        raise ArgumentError(_reasons(exc)) from None


def legacy_digits(*fields: str) -> Upgrade:
    """An `Upgrade` for payloads an older release wrote with integers as strings (`{"order_id":
    "42"}`): each named field holding ASCII digits becomes that integer. Anything else is left
    for the converter to judge, so "4x" is still an error naming the field."""

    def upgrade(payload: Payload) -> Payload:
        found = [f for f in fields if _digits(payload.get(f))]
        if not found:
            return payload
        return {**payload, **{f: int(typing.cast(str, payload[f])) for f in found}}

    return upgrade


def _digits(value: object) -> bool:
    # str.isdigit() is true for "²" and "١٢", which are no integer on the wire.
    return isinstance(value, str) and value.isascii() and value.isdigit()
