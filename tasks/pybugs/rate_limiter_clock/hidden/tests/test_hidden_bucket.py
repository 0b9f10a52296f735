from throttle import FakeClock, TokenBucket


def test_retry_after_zero_when_available():
    b = TokenBucket(2, 1.0, clock=FakeClock())
    assert b.retry_after() == 0.0


def test_retry_after_wait():
    c = FakeClock()
    b = TokenBucket(2, 4.0, clock=c)
    b.try_acquire(2)
    assert b.retry_after() == 0.25
    c.advance(100)
    b.try_acquire(2)
    assert b.retry_after(2) == 0.5
