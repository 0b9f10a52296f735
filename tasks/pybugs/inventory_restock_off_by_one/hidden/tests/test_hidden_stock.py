import pytest
from inventory import CapacityError, Stock


def test_restock_to_exact_capacity():
    s = Stock()
    s.add_item("X", 5, 1, 8)
    assert s.restock("X", 3) == 8
    with pytest.raises(CapacityError):
        s.restock("X", 1)


def test_reorder_after_withdraw_to_level():
    s = Stock()
    s.add_item("X", 5, 2, 8)
    s.withdraw("X", 3)
    assert s.items_to_reorder() == ["X"]
