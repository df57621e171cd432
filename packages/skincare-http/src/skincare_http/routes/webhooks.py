"""POST /v1/payments/webhook: the gateway's signed payment event."""

from __future__ import annotations

from typing import Annotated

from litestar import Response, Router, post
from litestar.params import HeaderParameter, JSONBody

from skincare_http import problems as p
from skincare_http.deps import Webhooks
from skincare_http.views import Received
from skincare_http.webhook_signature import SIGNATURE_HEADER, TIMESTAMP_HEADER
from skincare_http.wire import PaymentEventBody, respond

# Declared for OpenAPI only: the signature guard reads and checks them before the body.
Timestamp = Annotated[
    str | None,
    HeaderParameter(name=TIMESTAMP_HEADER, description="Unix seconds, within 5 minutes."),
]
Signature = Annotated[
    str | None,
    HeaderParameter(
        name=SIGNATURE_HEADER,
        description='"sha256=" + hex HMAC-SHA256 of "<X-Timestamp>.<raw body>".',
    ),
]


@post(
    "/webhook",
    status_code=200,
    responses=p.problem_responses(
        p.INVALID_REQUEST,
        p.INVALID_SIGNATURE,
        p.ORDER_NOT_FOUND,
        p.PAYLOAD_TOO_LARGE,
        p.INVALID_PAYMENT_EVENT,
        p.SERVICE_UNAVAILABLE,
    ),
    tags=["payments"],
)
async def receive_payment(
    webhooks: Webhooks,
    data: JSONBody[PaymentEventBody],
    x_timestamp: Timestamp = None,
    x_signature: Signature = None,
) -> Response[Received]:
    """Store the event and queue its processing; a duplicate event changes nothing."""
    await webhooks.receive(data.to_event())
    return respond(Received())


# The app puts this router behind the signature guard, which needs the webhook secret.
router = Router("/v1/payments", route_handlers=[receive_payment])
