"""Rupiah amounts as Indonesians write them: `Rp 1.250.000`.

Money in the domain is an integer number of rupiah (see `skincare_core.shop.models`); this is the
one place that turns such an integer into text, so e-mails and invoices show the same amount
the same way.
"""

from __future__ import annotations


def format_rupiah(amount: int) -> str:
    """`Rp` and the integer amount with a dot every three digits; negatives get a leading `-`."""
    sign = "-" if amount < 0 else ""
    grouped = f"{abs(amount):,}".replace(",", ".")
    return f"{sign}Rp {grouped}"
