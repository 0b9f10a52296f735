"""Business day arithmetic."""
from __future__ import annotations

from datetime import date, timedelta
from typing import AbstractSet

from workcal.holidays import is_weekend


def is_business_day(d: date, holidays: AbstractSet[date] = frozenset()) -> bool:
    return not is_weekend(d) and d not in holidays


def add_business_days(start: date, days: int, holidays: AbstractSet[date] = frozenset()) -> date:
    """Move ``days`` business days forward (or backward if negative)."""
    step = 1 if days >= 0 else -1
    remaining = abs(days)
    current = start
    while remaining:
        current += timedelta(days=step)
        if is_business_day(current, holidays):
            remaining -= 1
    return current
