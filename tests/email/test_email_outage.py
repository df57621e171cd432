"""A real SMTP server that refuses for a while: under a retry policy every e-mail arrives once
the server accepts again, and none is dead-lettered (a provider outage, with short timings)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session

from skincare_core.jobs import enqueue
from skincare_core.jobs.job import Job, new_job
from skincare_core.jobs.retry import RetryPolicy
from skincare_core.jobs.router import Router
from skincare_core.shop.ports import OrderEmail
from skincare_core.testing.jobs import InMemoryQueue
from skincare_email import SmtpEmailService
from tests.core.worker_kit import eventually, running, worker_on
from tests.email.email_support import SENDER, Inbox, StartServer

pytestmark = pytest.mark.anyio
OUTAGE_SECONDS = 1.5


class RefuseUntil(Inbox):
    """Answers 451 to every DATA until `until` (time.monotonic) and `at_least` refusals, then
    accepts: a slow machine still sees the outage hit every e-mail."""

    def __init__(self, until: float, at_least: int) -> None:
        super().__init__()
        self.until, self.at_least = until, at_least
        self.refused = 0

    async def handle_DATA(  # noqa: N802 (aiosmtpd's hook name)
        self, server: SMTP, session: Session, envelope: Envelope
    ) -> str:
        if time.monotonic() < self.until or self.refused < self.at_least:
            self.refused += 1
            return "451 4.3.0 try again later"
        return await super().handle_DATA(server, session, envelope)


async def test_every_e_mail_arrives_after_the_server_refused_for_a_while(
    smtp_server: StartServer, order_email: OrderEmail
) -> None:
    inbox = RefuseUntil(time.monotonic() + OUTAGE_SECONDS, at_least=40)
    smtp = SmtpEmailService(
        host="127.0.0.1", port=smtp_server(inbox), sender=SENDER, timeout=5.0, security="none"
    )

    async def send(job: Job) -> None:
        await smtp.send_order_confirmation(str(job.payload["to"]), order_email)

    router = Router()
    router.register("mail", send)
    # The shop's e-mail policy in miniature: many attempts, doubling waits, full jitter.
    policy = RetryPolicy(attempts=30, base=timedelta(seconds=0.05), cap=timedelta(seconds=0.3))
    queue = InMemoryQueue(wait=timedelta(seconds=0.02))
    for n in range(20):
        await enqueue(queue, new_job("mail", to=f"pelanggan{n}@example.test"))
    worker = worker_on(queue, router, max_attempts=1, retry_policies={"mail": policy})
    async with running(worker):
        await eventually(lambda: queue.depth == 0, within=15.0)
    assert inbox.refused >= 40
    assert sorted(e.rcpt_tos[0] for e in inbox.envelopes) == sorted(
        f"pelanggan{n}@example.test" for n in range(20)
    )
    assert await queue.list() == []
