import pytest
from netutil import retry


def test_non_listed_exception_not_retried():
    calls, slept = [], []

    @retry(attempts=5, exceptions=(ConnectionError,), sleep=slept.append)
    def f():
        calls.append(1)
        raise ValueError("bad payload")

    with pytest.raises(ValueError):
        f()
    assert calls == [1] and slept == []


def test_last_exception_reraised():
    n = {"i": 0}

    @retry(attempts=2, exceptions=(OSError,), sleep=lambda s: None)
    def f():
        n["i"] += 1
        raise TimeoutError("t%d" % n["i"])

    with pytest.raises(TimeoutError, match="t2"):
        f()


def test_single_attempt_no_sleep():
    slept = []

    @retry(attempts=1, sleep=slept.append)
    def f():
        raise ConnectionError()

    with pytest.raises(ConnectionError):
        f()
    assert slept == []
