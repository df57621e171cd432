"""A maildir writer for local runs: every e-mail becomes a file any mail client opens."""

from __future__ import annotations

import mailbox
from email.message import EmailMessage
from pathlib import Path

import anyio

from skincare_email.composer import RenderingEmailService


class MaildirEmailService(RenderingEmailService):
    """Delivers into the maildir at `path` (created on first use) instead of sending."""

    def __init__(self, path: Path, sender: str, *, shop_name: str = "Skincare") -> None:
        super().__init__(sender=sender, shop_name=shop_name)
        self.path = Path(path)

    async def deliver(self, message: EmailMessage) -> None:
        """Write the message into `new/`; mailbox writes to `tmp/` first, then renames."""
        await anyio.to_thread.run_sync(self._add, message)

    def _add(self, message: EmailMessage) -> None:
        # mailbox only creates the subfolders when the maildir folder itself is new.
        for sub in ("tmp", "new", "cur"):
            (self.path / sub).mkdir(parents=True, exist_ok=True)
        mailbox.Maildir(self.path, create=False).add(message)
