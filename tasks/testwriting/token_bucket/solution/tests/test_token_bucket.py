import pytest

from token_bucket import KeyedLimiter, TokenBucket


class Clock:
    def __init__(self, now=100.0):
        self.now = now

    def __call__(self):
        return self.now


def test_rejects_bad_parameters():
    for rate, cap in ((0, 1), (1, 0), (-1, 5)):
        with pytest.raises(ValueError):
            TokenBucket(rate, cap, Clock())


def test_starts_full_and_drains():
    clock = Clock()
    b = TokenBucket(1, 3, clock)
    assert [b.try_acquire() for _ in range(4)] == [True, True, True, False]
    assert b.tokens == 0


def test_refills_at_rate_up_to_capacity():
    clock = Clock()
    b = TokenBucket(2, 4, clock)
    assert b.try_acquire(4)
    clock.now += 1.0
    assert b.try_acquire(2) and not b.try_acquire(1)
    clock.now += 60
    assert b.try_acquire(4) and not b.try_acquire(1)


def test_exact_amount_is_enough():
    clock = Clock()
    b = TokenBucket(1, 2, clock)
    assert b.try_acquire(2)
    clock.now += 1.0
    assert b.try_acquire(1)


def test_clock_going_backwards_does_not_add_or_remove_tokens():
    clock = Clock(50.0)
    b = TokenBucket(1, 2, clock)
    b.try_acquire(2)
    clock.now = 40.0
    assert not b.try_acquire(1) and b.tokens == 0 and b.updated == 50.0


def test_too_many_at_once_is_an_error():
    b = TokenBucket(1, 3, Clock())
    with pytest.raises(ValueError, match="cannot take 4 tokens from a bucket of 3"):
        b.try_acquire(4)
    assert b.try_acquire(3)


def test_wait_time():
    clock = Clock()
    b = TokenBucket(4, 4, clock)
    assert b.wait_time() == 0.0
    b.try_acquire(4)
    assert b.wait_time() == pytest.approx(0.25)
    assert b.wait_time(2) == pytest.approx(0.5)
    clock.now += 0.25
    assert b.wait_time(1) == 0.0


def test_keyed_limiter_keeps_one_bucket_per_key():
    clock = Clock()
    lim = KeyedLimiter(1, 2, clock)
    assert lim.allow("a") and lim.allow("a") and not lim.allow("a")
    assert lim.allow("b", 2) and not lim.allow("b")
    assert set(lim.buckets) == {"a", "b"}
    clock.now += 1
    assert lim.allow("a") and not lim.allow("a")
