"""stats package."""
from stats.histogram import histogram
from stats.edges import bin_edges
