from events import EventBus


def test_emit():
    bus, got = EventBus(), []
    bus.subscribe("t", got.append)
    assert bus.emit("t", 1) == 1 and got == [1]


def test_unsubscribe():
    bus, got = EventBus(), []
    bus.subscribe("t", got.append)
    bus.unsubscribe("t", got.append)
    assert bus.emit("t", 1) == 0


def test_self_unsubscribe_during_emit():
    bus, calls = EventBus(), []

    def once(p):
        calls.append("A")
        bus.unsubscribe("t", once)

    bus.subscribe("t", once)
    bus.subscribe("t", lambda p: calls.append("B"))
    bus.subscribe("t", lambda p: calls.append("C"))
    bus.emit("t")
    assert calls == ["A", "B", "C"]


def test_other_topic():
    assert EventBus().emit("none") == 0
