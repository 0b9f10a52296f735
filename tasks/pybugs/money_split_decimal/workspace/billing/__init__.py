"""Billing helpers."""
from billing.money import CENT, to_decimal
from billing.split import round_money, split_amount, split_by_weights

__all__ = ["CENT", "round_money", "split_amount", "split_by_weights", "to_decimal"]
