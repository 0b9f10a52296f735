"""Disk quota helpers."""
from diskquota.errors import UnitError
from diskquota.quota import Quota
from diskquota.units import format_size, parse_size

__all__ = ["Quota", "UnitError", "format_size", "parse_size"]
