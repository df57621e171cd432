"""Generated requests (schemathesis, valid auth) get no 5xx and only documented responses.

The app is built at import because `@schema.parametrize()` needs the schema at collection
(schemathesis' lazy `from_fixture` does not run on pytest 9).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from skincare_core.testing.shop import ManualClock
from skincare_http import create_app
from tests.http.http_support import (
    SETTINGS,
    FakeReadiness,
    MemoryBackend,
    bearer,
    seed_shop,
    services_for,
)

if TYPE_CHECKING:
    from schemathesis.specs.openapi.schemas import OpenApiCase

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
BACKEND = MemoryBackend()
SEED = anyio.run(seed_shop, BACKEND)
APP = create_app(
    services=services_for(BACKEND.uow, ManualClock(), FakeReadiness()), settings=SETTINGS
)
schema = schemathesis.openapi.from_asgi("/schema/openapi.json", APP)


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_generated_requests_conform(case: OpenApiCase) -> None:
    case.call_and_validate(headers=bearer(SEED.alice.id), checks=CHECKS)
