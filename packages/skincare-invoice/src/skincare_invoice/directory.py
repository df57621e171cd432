"""Invoices as files under a root directory; atomic, first write wins."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path, PurePosixPath

import anyio


class InvalidInvoiceKey(ValueError):
    """A key that is empty, absolute or climbs out of the store's root."""


class DirectoryInvoiceStore:
    """Key `invoices/SKN-1.pdf` -> file `<root>/invoices/SKN-1.pdf`.

    A PDF is written to a temp file in the target's directory, fsynced, then hard-linked to
    its name: the link fails if the name exists, so of two concurrent stores exactly one
    lands, a reader never sees half a file, and storing an existing key is a no-op. A crash
    mid-write can leave a `.tmp-*` file behind, never a partial invoice.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path_for(self, key: str) -> Path:
        """The file that holds `key`; InvalidInvoiceKey if the key would leave the root."""
        pure = PurePosixPath(key)
        if not key or "\x00" in key or "\\" in key or pure.is_absolute() or ".." in pure.parts:
            raise InvalidInvoiceKey(f"invalid invoice key {key!r}")
        path = self.root.joinpath(*pure.parts)
        if not pure.parts or path.name.startswith(".tmp-"):
            raise InvalidInvoiceKey(f"invalid invoice key {key!r}")
        return path

    async def exists(self, key: str) -> bool:
        """Whether an invoice is stored under `key`."""
        path = self.path_for(key)
        return await anyio.to_thread.run_sync(path.is_file)

    async def put(self, key: str, pdf: bytes) -> None:
        """Store `pdf` under `key` unless it is already there."""
        path = self.path_for(key)
        await anyio.to_thread.run_sync(_write_once, path, pdf)

    async def get(self, key: str) -> bytes:
        """The stored bytes (FileNotFoundError if absent)."""
        path = self.path_for(key)
        return await anyio.to_thread.run_sync(path.read_bytes)


def _write_once(path: Path, data: bytes) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(temp, path)
            _fsync_dir(path.parent)
    finally:
        os.unlink(temp)


def _fsync_dir(directory: Path) -> None:
    # The new name is durable only once its directory entry is on disk.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
