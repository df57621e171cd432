"""Invoice PDFs with fpdf2, stored in a directory or (optional extra) S3.

`S3InvoiceStore` lives in `skincare_invoice.s3` and needs the `s3` extra (boto3); it is not
imported here so the package works without it.
"""

from skincare_core.shop.money import format_rupiah
from skincare_invoice.directory import DirectoryInvoiceStore, InvalidInvoiceKey
from skincare_invoice.pdf import PdfInvoiceRenderer, latin1

__all__ = [
    "DirectoryInvoiceStore",
    "InvalidInvoiceKey",
    "PdfInvoiceRenderer",
    "format_rupiah",
    "latin1",
]
