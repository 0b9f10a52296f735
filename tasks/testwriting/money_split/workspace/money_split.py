"""Money in integer cents: parsing, formatting and fair splitting for the invoicing service."""

import re

_AMOUNT = re.compile(r"^(-)?(\d{1,3}(?:,\d{3})*|\d+)(?:\.(\d{1,2}))?$")


def parse_amount(text):
    """'1,234.5' -> 123450 cents. Thousands separators must be well placed."""
    m = _AMOUNT.match(text.strip())
    if not m:
        raise ValueError(f"not an amount: {text!r}")
    whole = int(m.group(2).replace(",", ""))
    frac = (m.group(3) or "0").ljust(2, "0")
    cents = whole * 100 + int(frac)
    return -cents if m.group(1) else cents


def format_amount(cents, symbol="$"):
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}{symbol}{whole:,}.{frac:02d}"


def split_evenly(cents, parts):
    """Split into *parts* amounts that differ by at most one cent and sum to *cents*; larger first."""
    if parts <= 0:
        raise ValueError("parts must be positive")
    base, extra = divmod(abs(cents), parts)
    shares = [base + 1 if i < extra else base for i in range(parts)]
    return [-s for s in shares] if cents < 0 else shares


def split_by_weights(cents, weights):
    """Split proportionally to *weights* (largest remainder method); the result sums to *cents*."""
    total = sum(weights)
    if not weights or total <= 0 or any(w < 0 for w in weights):
        raise ValueError("weights must be non-negative with a positive sum")
    exact = [cents * w / total for w in weights]
    shares = [int(x // 1) for x in exact]
    remainder = cents - sum(shares)
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - shares[i]), i))
    for i in order[:remainder]:
        shares[i] += 1
    return shares
