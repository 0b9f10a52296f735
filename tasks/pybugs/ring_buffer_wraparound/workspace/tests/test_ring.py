import pytest
from metrics import RingBuffer, moving_average


def test_not_full():
    b = RingBuffer(3)
    b.push(1); b.push(2)
    assert b.to_list() == [1, 2] and len(b) == 2


def test_wrapped_order():
    b = RingBuffer(3)
    for i in range(1, 6):
        b.push(i)
    assert b.to_list() == [3, 4, 5]


def test_len_capped():
    b = RingBuffer(2)
    for i in range(10):
        b.push(i)
    assert len(b) == 2


def test_empty_latest():
    with pytest.raises(IndexError):
        RingBuffer(1).latest()
