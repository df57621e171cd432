"""DirectoryInvoiceStore: first write wins, atomically, and keys stay inside the root."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skincare_core.shop.handlers import invoice_key
from skincare_core.shop.ports import InvoiceData
from skincare_invoice import DirectoryInvoiceStore, InvalidInvoiceKey, PdfInvoiceRenderer
from tests.invoice.invoice_support import pdf_text

pytestmark = pytest.mark.anyio
KEY = invoice_key("SKN-20261201-ABCD1234")


def every_file(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*") if path.is_file())


async def test_store_then_read_back(tmp_path: Path) -> None:
    store = DirectoryInvoiceStore(tmp_path)
    assert not await store.exists(KEY)
    await store.put(KEY, b"%PDF-first")
    assert await store.exists(KEY)
    assert await store.get(KEY) == b"%PDF-first"
    assert every_file(tmp_path) == [tmp_path / "invoices" / "SKN-20261201-ABCD1234.pdf"]


async def test_storing_twice_keeps_one_file_with_the_first_content(tmp_path: Path) -> None:
    store = DirectoryInvoiceStore(tmp_path)
    await store.put(KEY, b"%PDF-first")
    await store.put(KEY, b"%PDF-second")
    assert await store.get(KEY) == b"%PDF-first"
    assert len(every_file(tmp_path)) == 1


async def test_concurrent_stores_keep_one_valid_pdf(tmp_path: Path, invoice: InvoiceData) -> None:
    renderer = PdfInvoiceRenderer()
    candidates = [
        renderer.render(invoice),
        PdfInvoiceRenderer(shop_name="Another Shop").render(invoice),
    ]
    store = DirectoryInvoiceStore(tmp_path)
    async with anyio.create_task_group() as tg:
        for pdf in candidates:
            tg.start_soon(store.put, KEY, pdf)
    stored = await store.get(KEY)
    assert stored in candidates
    assert "SKN-20261201-ABCD1234" in pdf_text(stored)
    assert len(every_file(tmp_path)) == 1


@pytest.mark.parametrize("round_", range(20))
def test_racing_threads_leave_exactly_one_whole_file(tmp_path: Path, round_: int) -> None:
    # Eight threads released together on the same key; each writes a large distinct body, so a
    # torn or mixed file would not equal any of them.
    bodies = [bytes([65 + i]) * 256_000 for i in range(8)]
    store = DirectoryInvoiceStore(tmp_path)
    gate = threading.Barrier(len(bodies))
    key = f"invoices/race-{round_}.pdf"

    def write(body: bytes) -> None:
        gate.wait()
        anyio.run(store.put, key, body)

    threads = [threading.Thread(target=write, args=(body,)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (only,) = every_file(tmp_path)
    assert only.read_bytes() in bodies


async def test_no_temp_files_are_left(tmp_path: Path) -> None:
    store = DirectoryInvoiceStore(tmp_path)
    for number in range(5):
        await store.put(invoice_key(f"SKN-{number}"), b"%PDF")
        await store.put(invoice_key(f"SKN-{number}"), b"%PDF")
    names = [path.name for path in every_file(tmp_path)]
    assert sorted(names) == [f"SKN-{n}.pdf" for n in range(5)]


@pytest.mark.parametrize(
    "key",
    [
        "",
        ".",
        "../escape.pdf",
        "invoices/../../escape.pdf",
        "/etc/passwd",
        "a\\b.pdf",
        "nul\x00.pdf",
        "invoices/.tmp-abc.part",
    ],
)
async def test_keys_that_leave_the_root_are_refused(tmp_path: Path, key: str) -> None:
    store = DirectoryInvoiceStore(tmp_path / "root")
    with pytest.raises(InvalidInvoiceKey):
        await store.put(key, b"%PDF")
    with pytest.raises(InvalidInvoiceKey):
        await store.exists(key)
    assert not (tmp_path / "escape.pdf").exists()


@given(st.text(max_size=40))
def test_any_accepted_key_maps_inside_the_root(key: str) -> None:
    root = Path("/srv/invoices-root")
    try:
        path = DirectoryInvoiceStore(root).path_for(key)
    except InvalidInvoiceKey:
        return
    assert path.is_relative_to(root)
    assert path != root
    assert ".." not in path.relative_to(root).parts
