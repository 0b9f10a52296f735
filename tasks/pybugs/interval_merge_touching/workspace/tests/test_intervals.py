import pytest
from calendarkit import free_slots, merge_intervals


def test_overlap():
    assert merge_intervals([(1, 5), (3, 7)]) == [(1, 7)]


def test_disjoint():
    assert merge_intervals([(1, 2), (4, 5)]) == [(1, 2), (4, 5)]


def test_touching():
    assert merge_intervals([(9, 10), (10, 11)]) == [(9, 11)]


def test_bad():
    with pytest.raises(ValueError):
        merge_intervals([(5, 1)])
