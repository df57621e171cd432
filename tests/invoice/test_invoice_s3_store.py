"""S3InvoiceStore against moto's real HTTP server: conditional writes keep the first PDF."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import boto3
import pytest
from botocore.exceptions import ClientError

from skincare_core.shop.handlers import invoice_key
from skincare_core.shop.ports import InvoiceData
from skincare_invoice import PdfInvoiceRenderer
from skincare_invoice.s3 import S3InvoiceStore
from tests.invoice.invoice_support import pdf_text

pytestmark = pytest.mark.anyio
KEY = invoice_key("SKN-20261201-ABCD1234")


@pytest.fixture
def s3(moto_endpoint: str) -> Any:
    return boto3.client("s3", region_name="us-east-1", endpoint_url=moto_endpoint)


@pytest.fixture
def bucket(s3: Any) -> str:
    name = f"invoices-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    return name


def object_keys(s3: Any, bucket: str) -> list[str]:
    listing = s3.list_objects_v2(Bucket=bucket)
    return [entry["Key"] for entry in listing.get("Contents", [])]


async def test_store_under_the_prefix_then_read_back(
    s3: Any, bucket: str, invoice: InvoiceData
) -> None:
    store = S3InvoiceStore(s3, bucket, prefix="shop-a/")
    pdf = PdfInvoiceRenderer().render(invoice)
    assert not await store.exists(KEY)
    await store.put(KEY, pdf)
    assert await store.exists(KEY)
    assert await store.get(KEY) == pdf
    assert "SKN-20261201-ABCD1234" in pdf_text(await store.get(KEY))
    head = s3.head_object(Bucket=bucket, Key=f"shop-a/{KEY}")
    assert head["ContentType"] == "application/pdf"
    assert object_keys(s3, bucket) == [f"shop-a/{KEY}"]


async def test_storing_twice_keeps_the_first_object(s3: Any, bucket: str) -> None:
    store = S3InvoiceStore(s3, bucket)
    await store.put(KEY, b"%PDF-first")
    await store.put(KEY, b"%PDF-second")
    assert await store.get(KEY) == b"%PDF-first"
    assert object_keys(s3, bucket) == [KEY]


async def test_concurrent_stores_keep_one_valid_pdf(
    s3: Any, bucket: str, invoice: InvoiceData
) -> None:
    candidates = [
        PdfInvoiceRenderer().render(invoice),
        PdfInvoiceRenderer(shop_name="Another Shop").render(invoice),
    ]
    store = S3InvoiceStore(s3, bucket)
    async with anyio.create_task_group() as tg:
        for pdf in candidates:
            tg.start_soon(store.put, KEY, pdf)
    stored = await store.get(KEY)
    assert stored in candidates
    assert "SKN-20261201-ABCD1234" in pdf_text(stored)
    assert object_keys(s3, bucket) == [KEY]


async def test_a_missing_bucket_is_an_error_not_a_missing_key(s3: Any) -> None:
    store = S3InvoiceStore(s3, f"no-such-bucket-{uuid.uuid4().hex[:8]}")
    with pytest.raises(ClientError, match=r"NoSuchBucket|404"):
        await store.put(KEY, b"%PDF")
