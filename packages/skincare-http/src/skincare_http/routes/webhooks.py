"""POST /v1/payments/webhook: the gateway's signed payment event."""

from __future__ import annotations

from typing import Annotated

from litestar import Response, post
from litestar.params import HeaderParameter, JSONBody

from skincare_core.shop.models import PaymentEvent
from skincare_http import problems as p
from skincare_http.deps import Webhooks
from skincare_http.views import Received
from skincare_http.webhook_signature import SIGNATURE_HEADER, TIMESTAMP_HEADER
from skincare_http.wire import PaymentEventBody, respond

WEBHOOK_PROBLEMS = (
    p.INVALID_REQUEST, p.INVALID_SIGNATURE, p.ORDER_NOT_FOUND, p.PAYLOAD_TOO_LARGE,
    p.INVALID_PAYMENT_EVENT,
)  # fmt: skip
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
    responses=p.problem_responses(*WEBHOOK_PROBLEMS),
    tags=["payments"],
)
async def receive_payment(
    webhooks: Webhooks,
    data: JSONBody[PaymentEventBody],
    x_timestamp: Timestamp = None,
    x_signature: Signature = None,
) -> Response[Received]:
    """Store the event and queue its processing; a duplicate event changes nothing."""
    event = PaymentEvent(data.event_id, data.order_id, data.status, data.amount_rupiah)
    await webhooks.receive(event)
    return respond(Received())
