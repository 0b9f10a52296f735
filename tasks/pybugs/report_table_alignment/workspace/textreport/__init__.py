"""Plain-text reports."""
from textreport.cells import format_cell
from textreport.table import column_widths, render_table

__all__ = ["column_widths", "format_cell", "render_table"]
