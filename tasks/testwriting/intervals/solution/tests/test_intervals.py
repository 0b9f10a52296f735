import pytest

from intervals import Interval, free_slots, merge


def test_construction_and_repr():
    iv = Interval(3, 7)
    assert (iv.start, iv.end) == (3, 7)
    assert repr(iv) == "Interval(3, 7)"
    assert len(iv) == 4
    assert Interval(5, 5).is_empty() and not iv.is_empty()
    with pytest.raises(ValueError, match="ends before it starts"):
        Interval(5, 4)


def test_equality():
    assert Interval(1, 2) == Interval(1, 2)
    assert Interval(1, 2) != Interval(1, 3)
    assert Interval(1, 2) != Interval(0, 2)
    assert Interval(1, 2).__eq__("x") is NotImplemented


def test_overlaps_is_strict_at_the_ends():
    a = Interval(0, 10)
    assert a.overlaps(Interval(5, 15)) and Interval(5, 15).overlaps(a)
    assert a.overlaps(Interval(9, 11))
    assert not a.overlaps(Interval(10, 12))
    assert not Interval(10, 12).overlaps(a)
    assert not a.overlaps(Interval(-5, 0))
    assert a.overlaps(Interval(2, 3))


def test_contains_is_half_open():
    a = Interval(2, 5)
    assert a.contains(2) and a.contains(4)
    assert not a.contains(5) and not a.contains(1)


def test_merge_overlapping_touching_and_empty():
    merged = merge([Interval(5, 8), Interval(1, 3), Interval(2, 4), Interval(8, 9), Interval(6, 6), Interval(12, 13)])
    assert merged == [Interval(1, 4), Interval(5, 9), Interval(12, 13)]
    assert merge([Interval(1, 10), Interval(2, 3)]) == [Interval(1, 10)]
    assert merge([]) == []
    assert merge([Interval(4, 4)]) == []
    assert merge([Interval(1, 2), Interval(3, 4)]) == [Interval(1, 2), Interval(3, 4)]


def test_merge_does_not_alias_its_input():
    src = [Interval(1, 3)]
    out = merge(src)
    out[0].end = 99
    assert src[0].end == 3


def test_free_slots():
    busy = [Interval(9, 10), Interval(12, 13), Interval(12, 14)]
    assert free_slots(busy, 8, 18) == [Interval(8, 9), Interval(10, 12), Interval(14, 18)]
    assert free_slots(busy, 8, 18, min_length=2) == [Interval(10, 12), Interval(14, 18)]
    assert free_slots(busy, 8, 18, min_length=5) == []
    assert free_slots([], 8, 18) == [Interval(8, 18)]


def test_free_slots_clips_to_the_day():
    busy = [Interval(0, 9), Interval(17, 24), Interval(30, 31)]
    assert free_slots(busy, 8, 18) == [Interval(9, 17)]
    assert free_slots([Interval(1, 2)], 8, 18) == [Interval(8, 18)]
    assert free_slots([Interval(18, 19)], 8, 18) == [Interval(8, 18)]
    assert free_slots([Interval(8, 18)], 8, 18) == []
    assert free_slots([Interval(10, 11)], 8, 18, min_length=2) == [Interval(8, 10), Interval(11, 18)]
    assert free_slots([Interval(9, 11)], 8, 18, min_length=1) == [Interval(8, 9), Interval(11, 18)]
    assert free_slots([Interval(7, 9)], 8, 18) == [Interval(9, 18)]
