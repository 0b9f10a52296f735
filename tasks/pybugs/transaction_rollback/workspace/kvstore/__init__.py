"""kvstore package."""
from kvstore.store import KeyValueStore
from kvstore.transaction import Transaction
