"""jobs package."""
from jobs.durations import format_duration, parse_duration
from jobs.errors import DurationError
