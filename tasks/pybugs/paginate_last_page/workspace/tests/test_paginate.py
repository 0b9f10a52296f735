import pytest
from pager import PageOutOfRange, Paginator


def test_exact_multiple():
    p = Paginator(list(range(30)), 10)
    assert p.num_pages == 3
    assert p.page(3).items == list(range(20, 30))


def test_partial_last_page():
    p = Paginator(list(range(45)), 10)
    assert p.num_pages == 5
    assert p.page(5).items == [40, 41, 42, 43, 44]


def test_out_of_range():
    with pytest.raises(PageOutOfRange):
        Paginator(list(range(30)), 10).page(4)


def test_bad_size():
    with pytest.raises(ValueError):
        Paginator([1], 0)


def test_has_next():
    p = Paginator(list(range(30)), 10)
    assert p.page(1).has_next and not p.page(3).has_next
