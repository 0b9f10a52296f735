"""Pagination utilities."""
from pager.page import Page, PageOutOfRange
from pager.paginate import Paginator

__all__ = ["Page", "PageOutOfRange", "Paginator"]
