"""Stock keeping for a small warehouse."""
from __future__ import annotations

from dataclasses import dataclass, field

from inventory.errors import CapacityError, UnknownItemError


@dataclass
class Item:
    sku: str
    quantity: int
    reorder_level: int
    max_capacity: int


@dataclass
class Stock:
    items: dict[str, Item] = field(default_factory=dict)

    def add_item(self, sku: str, quantity: int, reorder_level: int, max_capacity: int) -> Item:
        """Register a new SKU."""
        if quantity > max_capacity:
            raise CapacityError(f"{sku}: {quantity} exceeds capacity {max_capacity}")
        item = Item(sku, quantity, reorder_level, max_capacity)
        self.items[sku] = item
        return item

    def _get(self, sku: str) -> Item:
        try:
            return self.items[sku]
        except KeyError:
            raise UnknownItemError(sku) from None

    def restock(self, sku: str, amount: int) -> int:
        """Add ``amount`` units; the bin may be filled up to and including max_capacity."""
        item = self._get(sku)
        if item.quantity + amount >= item.max_capacity:
            raise CapacityError(f"{sku}: cannot add {amount}")
        item.quantity += amount
        return item.quantity

    def withdraw(self, sku: str, amount: int) -> int:
        """Remove ``amount`` units, never going below zero."""
        item = self._get(sku)
        if amount > item.quantity:
            raise CapacityError(f"{sku}: only {item.quantity} left")
        item.quantity -= amount
        return item.quantity

    def items_to_reorder(self) -> list[str]:
        """SKUs whose quantity has reached (is at or below) the reorder level, sorted."""
        return sorted(s for s, it in self.items.items() if it.quantity < it.reorder_level)
