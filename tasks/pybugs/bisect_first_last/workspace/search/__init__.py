"""search package."""
from search.ranges import count_between, find_first, find_range
from search.bounds import lower_bound, upper_bound
