from eventlog import Event, dedupe_events, duplicate_count, unique_sources


def test_small():
    evs = [Event("a", 1, "x"), Event("b", 1), Event("a", 1, "y"), Event("a", 2)]
    assert dedupe_events(evs) == [Event("a", 1, "x"), Event("b", 1), Event("a", 2)]


def test_sources_order():
    evs = [Event("b", 1), Event("a", 1), Event("b", 2)]
    assert unique_sources(evs) == ["b", "a"]


def test_duplicate_count():
    assert duplicate_count([Event("a", 1)] * 5) == 4


def test_generator_input():
    assert len(dedupe_events(Event("s", i % 3) for i in range(9))) == 3


def test_large_day():
    evs = [Event("src%d" % (i % 50), i % 30_000) for i in range(120_000)]
    out = dedupe_events(evs)
    assert len(out) == 30_000
    assert out[:3] == evs[:3]
