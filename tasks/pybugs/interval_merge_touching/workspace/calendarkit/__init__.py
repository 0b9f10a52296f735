"""calendarkit package."""
from calendarkit.intervals import merge_intervals
from calendarkit.slots import free_slots
