"""metrics package."""
from metrics.ring import RingBuffer
from metrics.window import moving_average
