import pytest
from events import EventBus, HandlerErrors


def test_errors_collected():
    bus, calls = EventBus(), []

    def bad(p):
        raise RuntimeError("x")

    bus.subscribe("t", bad)
    bus.subscribe("t", calls.append)
    with pytest.raises(HandlerErrors) as ei:
        bus.emit("t", 5)
    assert calls == [5]
    assert isinstance(ei.value.errors[0], RuntimeError)


def test_subscribe_during_emit_not_called_now():
    bus, calls = EventBus(), []

    def adder(p):
        calls.append("adder")
        bus.subscribe("t", lambda q: calls.append("late"))

    bus.subscribe("t", adder)
    assert bus.emit("t") == 1
    assert calls == ["adder"]
