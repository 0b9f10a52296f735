import pytest
from inventory import CapacityError, Stock, UnknownItemError


def make():
    s = Stock()
    s.add_item("A", 10, 3, 20)
    s.add_item("B", 3, 3, 10)
    s.add_item("C", 1, 2, 5)
    return s


def test_reorder_includes_below():
    assert "C" in make().items_to_reorder()


def test_reorder_at_level():
    assert make().items_to_reorder() == ["B", "C"]


def test_withdraw():
    s = make()
    assert s.withdraw("A", 4) == 6
    with pytest.raises(CapacityError):
        s.withdraw("C", 2)


def test_unknown():
    with pytest.raises(UnknownItemError):
        make().restock("Z", 1)


def test_restock_simple():
    assert make().restock("A", 5) == 15
