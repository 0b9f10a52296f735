"""Personal ledger tools."""
from ledger.model import Transaction, total
from ledger.reader import read_transactions, split_row

__all__ = ["Transaction", "read_transactions", "split_row", "total"]
