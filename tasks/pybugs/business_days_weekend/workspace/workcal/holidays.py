"""Weekend helpers."""
from datetime import date


def is_weekend(d: date) -> bool:
    """Saturday (5) and Sunday (6)."""
    return d.weekday() >= 5
