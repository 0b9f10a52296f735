from calendarkit import free_slots, merge_intervals


def test_unsorted():
    assert merge_intervals([(8, 9), (1, 3), (2, 4), (9, 9)]) == [(1, 4), (8, 9)]


def test_contained():
    assert merge_intervals([(5, 6), (1, 10)]) == [(1, 10)]


def test_free_slots_back_to_back():
    assert free_slots([(10, 11), (9, 10), (13, 14)], 8, 17) == [(8, 9), (11, 13), (14, 17)]
