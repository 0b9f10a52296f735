"""Half-open time intervals [start, end) used by the booking service to find free slots."""


class Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        if end < start:
            raise ValueError(f"interval ends before it starts: {start}..{end}")
        self.start = start
        self.end = end

    def __repr__(self):
        return f"Interval({self.start}, {self.end})"

    def __eq__(self, other):
        if not isinstance(other, Interval):
            return NotImplemented
        return (self.start, self.end) == (other.start, other.end)

    def __len__(self):
        return self.end - self.start

    def is_empty(self):
        return self.start == self.end

    def overlaps(self, other):
        """True when the two intervals share at least one point (touching ends do not overlap)."""
        return self.start < other.end and other.start < self.end

    def contains(self, point):
        return self.start <= point < self.end


def merge(intervals):
    """Merge overlapping or touching intervals; empty ones are dropped. Returns a sorted list."""
    result = []
    for iv in sorted((i for i in intervals if not i.is_empty()), key=lambda i: (i.start, i.end)):
        if result and iv.start <= result[-1].end:
            last = result[-1]
            result[-1] = Interval(last.start, max(last.end, iv.end))
        else:
            result.append(Interval(iv.start, iv.end))
    return result


def free_slots(busy, day_start, day_end, min_length=1):
    """The gaps of at least *min_length* between *busy* intervals, within [day_start, day_end)."""
    slots = []
    cursor = day_start
    for iv in merge(busy):
        if iv.end <= day_start or iv.start >= day_end:
            continue
        if iv.start - cursor >= min_length:
            slots.append(Interval(cursor, iv.start))
        cursor = max(cursor, iv.end)
    if day_end - cursor >= min_length:
        slots.append(Interval(cursor, day_end))
    return slots
