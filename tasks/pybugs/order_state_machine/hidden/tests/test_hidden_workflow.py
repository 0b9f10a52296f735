import pytest
from orders import InvalidTransition, Order, State


def test_history():
    o = Order("o2")
    o.pay(); o.ship()
    assert o.history == [(State.NEW, State.PAID), (State.PAID, State.SHIPPED)]


def test_no_double_pay():
    o = Order("o3")
    o.pay(); o.ship(); o.deliver()
    with pytest.raises(InvalidTransition):
        o.pay()
    assert o.history[-1] == (State.SHIPPED, State.DELIVERED)


def test_cannot_ship_unpaid():
    o = Order("o4")
    with pytest.raises(InvalidTransition):
        o.ship()
    assert o.state is State.NEW and o.history == []
