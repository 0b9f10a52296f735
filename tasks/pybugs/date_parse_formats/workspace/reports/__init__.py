"""Report helpers."""
from reports.dates import parse_date, parse_range
from reports.errors import InvalidDate

__all__ = ["InvalidDate", "parse_date", "parse_range"]
