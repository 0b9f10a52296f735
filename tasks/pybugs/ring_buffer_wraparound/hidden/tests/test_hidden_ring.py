from metrics import RingBuffer, moving_average


def test_latest_after_wrap():
    b = RingBuffer(3)
    for i in range(7):
        b.push(i)
    assert b.latest() == 6


def test_moving_average():
    assert moving_average([2, 4, 6, 8], 2) == [2, 3, 5, 7]


def test_capacity_one():
    b = RingBuffer(1)
    b.push("a"); b.push("b")
    assert b.to_list() == ["b"]
