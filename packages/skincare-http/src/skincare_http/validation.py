"""Litestar's parameter validation errors as FieldErrors, named as the client sent them.

Litestar reports a wrong parameter in `ValidationException.extra` under its Python name, and a
missing one without any structured data; both are resolved against the handler's parameter
definitions, so a header is named `Idempotency-Key`, never `idempotency_key`.
"""

from __future__ import annotations

from collections.abc import Mapping

from litestar.enums import ParamType
from litestar.exceptions import ValidationException
from litestar.params import ParameterKwarg
from litestar.typing import FieldDefinition

from skincare_http.connections import PlainRequest
from skincare_http.wire import FieldError

Parameters = Mapping[str, FieldDefinition]


def field_errors(request: PlainRequest, exc: ValidationException) -> list[FieldError]:
    """What is wrong, per parameter: the reported errors, else the missing parameters."""
    parameters = request.route_handler.parsed_fn_signature.parameters
    extra = exc.extra if isinstance(exc.extra, list) else []
    reported = [_reported(error, parameters) for error in extra if isinstance(error, dict)]
    return reported or _missing(request, parameters)


def _reported(error: dict[str, object], parameters: Parameters) -> FieldError:
    key = str(error.get("key", "body"))
    raw_source = error.get("source", "body")
    source = raw_source.value if isinstance(raw_source, ParamType) else str(raw_source)
    definition = parameters.get(key)
    name = _alias(definition) if definition is not None else None
    return FieldError(field=name or key, source=source, message=str(error.get("message")))


def _missing(request: PlainRequest, parameters: Parameters) -> list[FieldError]:
    present = {
        ParamType.HEADER: request.headers,
        ParamType.QUERY: request.query_params,
        ParamType.COOKIE: request.cookies,
    }
    injected = request.route_handler.resolve_dependencies()
    errors = []
    for key, definition in parameters.items():
        kwarg = definition.kwarg_definition
        if not isinstance(kwarg, ParameterKwarg) or key in request.path_params or key in injected:
            continue
        name = _alias(definition) or key
        if definition.is_required and name not in present[kwarg.param_type]:
            errors.append(FieldError(field=name, source=kwarg.param_type.value, message="required"))
    return errors


def _alias(definition: FieldDefinition) -> str | None:
    kwarg = definition.kwarg_definition
    return kwarg.name if isinstance(kwarg, ParameterKwarg) else None
