from notes import NoteStore


def test_metadata_not_shared_between_stores():
    s1, s2 = NoteStore(), NoteStore()
    n = s1.create("a")
    s1.annotate(n.id, "k", "v")
    assert s2.create("b").metadata == {}


def test_caller_list_is_copied():
    tags = ["x"]
    s = NoteStore()
    n = s.create("a", tags=tags)
    s.tag(n.id, "y")
    assert tags == ["x"]
    assert n.tags == ["x", "y"]
