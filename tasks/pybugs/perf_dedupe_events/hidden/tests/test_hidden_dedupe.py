from eventlog import Event, dedupe_events, unique_sources


def test_large_unique():
    evs = [Event("s%d" % (i % 7), i) for i in range(150_000)]
    assert len(dedupe_events(evs)) == 150_000


def test_many_sources():
    evs = [Event("s%d" % i, 0) for i in range(80_000)]
    assert unique_sources(evs)[-1] == "s79999"


def test_order_kept_large():
    evs = [Event("x", i % 1000) for i in range(50_000)]
    assert [e.event_id for e in dedupe_events(evs)] == list(range(1000))
