"""Helpers of the invoice tests."""

from __future__ import annotations

import io

from pypdf import PdfReader


def pdf_text(pdf: bytes) -> str:
    """All text of a PDF, as a reader library extracts it (raises if it is not a PDF)."""
    reader = PdfReader(io.BytesIO(pdf), strict=True)
    return "\n".join(page.extract_text() for page in reader.pages)
