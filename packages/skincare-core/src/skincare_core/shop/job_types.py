"""The shop's job types: one constant each, the strings that route a job to its handler."""

from __future__ import annotations

SEND_CONFIRMATION_EMAIL = "send_confirmation_email"
PROCESS_PAYMENT = "process_payment"
GENERATE_INVOICE_PDF = "generate_invoice_pdf"
SEND_PAYMENT_RECEIVED_EMAIL = "send_payment_received_email"
