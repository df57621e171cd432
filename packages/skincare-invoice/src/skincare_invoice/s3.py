"""Invoices in an S3 bucket through boto3 (the `s3` extra); calls run in a worker thread.

`put_object` with `IfNoneMatch="*"` makes S3 itself refuse a second write of a key, so two
concurrent stores keep the first object; a single PUT is atomic, so no reader sees half a PDF.
Import this module only when the extra is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from types_boto3_s3.client import S3Client

_MISSING = frozenset({"404", "NoSuchKey", "NotFound"})
# 412: the key exists; 409: a concurrent conditional write to the same key is in flight.
_ALREADY_THERE = frozenset({"PreconditionFailed", "412", "ConditionalRequestConflict", "409"})


class S3InvoiceStore:
    """Key `invoices/SKN-1.pdf` -> object `<prefix>invoices/SKN-1.pdf` in `bucket`."""

    def __init__(self, client: S3Client, bucket: str, prefix: str = "") -> None:
        self._client = client
        self.bucket = bucket
        self.prefix = prefix

    def object_key(self, key: str) -> str:
        """The S3 object key for an invoice key."""
        return f"{self.prefix}{key}"

    async def exists(self, key: str) -> bool:
        """Whether the object exists (HEAD)."""
        return await anyio.to_thread.run_sync(self._exists, self.object_key(key))

    async def put(self, key: str, pdf: bytes) -> None:
        """Store unless the object exists; a lost race is a no-op too."""
        await anyio.to_thread.run_sync(self._put, self.object_key(key), pdf)

    async def get(self, key: str) -> bytes:
        """The stored bytes."""
        return await anyio.to_thread.run_sync(self._get, self.object_key(key))

    def _exists(self, object_key: str) -> bool:
        try:
            self._client.head_object(Bucket=self.bucket, Key=object_key)
        except ClientError as exc:
            if _code(exc) in _MISSING:
                return False
            raise
        return True

    def _put(self, object_key: str, pdf: bytes) -> None:
        try:
            self._client.put_object(
                Bucket=self.bucket,
                Key=object_key,
                Body=pdf,
                ContentType="application/pdf",
                IfNoneMatch="*",
            )
        except ClientError as exc:
            if _code(exc) not in _ALREADY_THERE:
                raise

    def _get(self, object_key: str) -> bytes:
        response = self._client.get_object(Bucket=self.bucket, Key=object_key)
        return response["Body"].read()


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))
