"""Both adapter packages import and work without boto3 (their optional extras)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
sys.modules["boto3"] = None
sys.modules["botocore"] = None
from datetime import UTC, datetime

import anyio
import skincare_email, skincare_invoice
from skincare_core.shop.models import OrderItem
from skincare_core.shop.ports import InvoiceData, OrderEmail

items = (OrderItem(1, "Serum", 1, 10_000),)
mailer = skincare_email.MaildirEmailService(sys.argv[1], "shop@skincare.test")
anyio.run(mailer.send_order_confirmation, "a@b.test", OrderEmail("SKN-1", items, 10_000, "j1"))
data = InvoiceData("SKN-1", datetime.now(UTC), "a@b.test", items, 10_000, paid=True)
pdf = skincare_invoice.PdfInvoiceRenderer().render(data)
anyio.run(skincare_invoice.DirectoryInvoiceStore(sys.argv[1]).put, "SKN-1.pdf", pdf)
try:
    import skincare_email.ses
except ImportError:
    print("ses needs the extra")
"""


def test_the_packages_work_without_boto3(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ses needs the extra"
    assert len(list((tmp_path / "new").iterdir())) == 1
    assert (tmp_path / "SKN-1.pdf").read_bytes().startswith(b"%PDF-")
