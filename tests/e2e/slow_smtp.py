"""A real SMTP server (aiosmtpd) on 127.0.0.1 that takes its time over each message."""

from __future__ import annotations

import asyncio
import email
import threading
from collections import Counter
from typing import Any

from aiosmtpd.controller import Controller

from skincare_services.local import free_port


class SlowHandler:
    """Accepts every message after `delay` seconds; counts sessions in DATA and Message-IDs."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.in_data = 0
        self.message_ids: Counter[str] = Counter()
        self._lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        with self._lock:
            self.in_data += 1
        try:
            await asyncio.sleep(self.delay)
            message = email.message_from_bytes(envelope.original_content or envelope.content)
            with self._lock:
                self.message_ids[str(message["Message-ID"])] += 1
        finally:
            with self._lock:
                self.in_data -= 1
        return "250 OK"


def start_smtp(delay: float) -> tuple[Controller, SlowHandler]:
    """Start the server; the caller stops the controller."""
    handler = SlowHandler(delay)
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    return controller, handler
