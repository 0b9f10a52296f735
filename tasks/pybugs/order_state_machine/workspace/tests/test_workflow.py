import pytest
from orders import InvalidTransition, Order, State


def test_happy_path():
    o = Order("o1")
    o.pay(); o.ship(); o.deliver()
    assert o.state is State.DELIVERED


def test_cancel_new():
    o = Order("o1")
    o.cancel()
    assert o.is_final


def test_cannot_cancel_shipped():
    o = Order("o1")
    o.pay(); o.ship()
    with pytest.raises(InvalidTransition):
        o.cancel()
    assert o.state is State.SHIPPED


def test_cancelled_is_final():
    o = Order("o1")
    o.cancel()
    with pytest.raises(InvalidTransition):
        o.pay()
