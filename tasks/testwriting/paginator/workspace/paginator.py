"""Pagination for the listing API: page slices, counts and the page-link window with ellipses."""


class Paginator:
    def __init__(self, total, per_page=20):
        if per_page < 1:
            raise ValueError("per_page must be at least 1")
        if total < 0:
            raise ValueError("total must not be negative")
        self.total = total
        self.per_page = per_page

    @property
    def pages(self):
        """Number of pages; an empty listing still has one (empty) page."""
        return max(1, -(-self.total // self.per_page))

    def bounds(self, page):
        """[start, stop) item indexes of *page* (1-based)."""
        if not 1 <= page <= self.pages:
            raise IndexError(f"page {page} out of 1..{self.pages}")
        start = (page - 1) * self.per_page
        return start, min(start + self.per_page, self.total)

    def has_next(self, page):
        return page < self.pages

    def has_previous(self, page):
        return page > 1

    def window(self, page, radius=2):
        """Page numbers to show as links: the first, the last, and *radius* around *page*; None marks a gap."""
        self.bounds(page)
        shown = {1, self.pages} | set(range(max(1, page - radius), min(self.pages, page + radius) + 1))
        out, previous = [], 0
        for n in sorted(shown):
            if n - previous == 2:
                out.append(previous + 1)  # a gap of one page is shown as the page itself
            elif n - previous > 2:
                out.append(None)
            out.append(n)
            previous = n
        return out


def paginate(items, page, per_page=20):
    """The items of *page* and the page metadata the API returns."""
    p = Paginator(len(items), per_page)
    start, stop = p.bounds(page)
    return {"items": items[start:stop], "page": page, "pages": p.pages, "total": p.total,
            "next": page + 1 if p.has_next(page) else None, "previous": page - 1 if p.has_previous(page) else None}
