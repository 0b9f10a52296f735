from pager import Paginator


def test_empty_has_one_page():
    p = Paginator([], 5)
    assert p.num_pages == 1
    assert p.page(1).items == []


def test_iter_covers_everything():
    data = list(range(23))
    pages = list(Paginator(data, 4))
    assert [x for pg in pages for x in pg.items] == data
    assert pages[-1].items == [20, 21, 22]


def test_fewer_than_one_page():
    assert Paginator([1, 2], 10).num_pages == 1
