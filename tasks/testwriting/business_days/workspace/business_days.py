"""Business-day arithmetic for delivery estimates: weekends and public holidays are skipped."""

import datetime as dt

WEEKEND = (5, 6)  # Saturday, Sunday


def is_business_day(day, holidays=()):
    return day.weekday() not in WEEKEND and day not in holidays


def add_business_days(start, n, holidays=()):
    """The day *n* business days after *start* (before it for negative n); 0 rolls forward to a business day."""
    step = 1 if n >= 0 else -1
    day = start
    if n == 0:
        while not is_business_day(day, holidays):
            day += dt.timedelta(days=1)
        return day
    remaining = abs(n)
    while remaining:
        day += dt.timedelta(days=step)
        if is_business_day(day, holidays):
            remaining -= 1
    return day


def business_days_between(start, end, holidays=()):
    """Business days in (start, end]; negative when end is before start."""
    if end < start:
        return -business_days_between(end, start, holidays)
    count = 0
    day = start
    while day < end:
        day += dt.timedelta(days=1)
        if is_business_day(day, holidays):
            count += 1
    return count


def delivery_date(ordered_at, days, cutoff_hour=14, holidays=()):
    """Orders after the cut-off hour (or on a non-business day) are handled the next business day."""
    day = ordered_at.date()
    if ordered_at.hour >= cutoff_hour or not is_business_day(day, holidays):
        day = add_business_days(day, 1, holidays)
    return add_business_days(day, days, holidays)
