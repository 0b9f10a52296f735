from notes import NoteStore


def test_create_ids():
    s = NoteStore()
    assert s.create("a").id == 1
    assert s.create("b").id == 2


def test_tags_not_shared():
    s = NoteStore()
    a = s.create("a")
    b = s.create("b")
    s.tag(a.id, "urgent")
    assert b.tags == []


def test_find_by_tag():
    s = NoteStore()
    a = s.create("a", tags=["x"])
    s.create("b", tags=["y"])
    assert s.find_by_tag("x") == [a]


def test_summary():
    s = NoteStore()
    assert s.create("a", tags=["x", "y"]).summary() == "#1 a [x, y]"
