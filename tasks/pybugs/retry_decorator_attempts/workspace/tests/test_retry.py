import pytest
from netutil import backoff_delays, retry


def flaky(fail_times, exc=ConnectionError):
    state = {"calls": 0}

    def f():
        state["calls"] += 1
        if state["calls"] <= fail_times:
            raise exc("boom %d" % state["calls"])
        return "ok"
    return f, state


def test_succeeds_after_failures():
    slept = []
    f, st = flaky(2)
    g = retry(attempts=3, sleep=slept.append)(f)
    assert g() == "ok"
    assert st["calls"] == 3
    assert slept == [0.1, 0.2]


def test_gives_up_after_attempts():
    f, st = flaky(10)
    g = retry(attempts=3, exceptions=(ConnectionError,), sleep=lambda s: None)(f)
    with pytest.raises(ConnectionError):
        g()
    assert st["calls"] == 3


def test_delays():
    assert backoff_delays(4, 1.0, 3.0) == [1.0, 3.0, 9.0]


def test_bad_attempts():
    with pytest.raises(ValueError):
        retry(attempts=0)
