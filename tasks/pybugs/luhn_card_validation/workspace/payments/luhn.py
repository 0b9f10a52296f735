"""Luhn checksum."""
from __future__ import annotations

from payments.cleaning import normalize_number


def checksum(digits: str) -> int:
    total = 0
    for i, ch in enumerate(digits):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10


def is_valid(number: str) -> bool:
    digits = normalize_number(number)
    if digits is None or len(digits) < 2:
        return False
    return checksum(digits) == 0


def check_digit(partial: str) -> int:
    """Digit to append to ``partial`` to make it valid."""
    return (10 - checksum(partial + "0")) % 10
