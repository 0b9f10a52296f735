import pytest
from throttle import FakeClock, TokenBucket


def test_burst():
    b = TokenBucket(3, 1.0, clock=FakeClock())
    assert [b.try_acquire() for _ in range(4)] == [True, True, True, False]


def test_refill():
    c = FakeClock()
    b = TokenBucket(2, 2.0, clock=c)
    b.try_acquire(); b.try_acquire()
    c.advance(0.5)
    assert b.try_acquire() and not b.try_acquire()


def test_idle_does_not_overfill():
    c = FakeClock()
    b = TokenBucket(5, 1.0, clock=c)
    c.advance(60)
    assert sum(b.try_acquire() for _ in range(20)) == 5


def test_bad_args():
    with pytest.raises(ValueError):
        TokenBucket(0, 1)
