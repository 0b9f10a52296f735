"""throttle package."""
from throttle.bucket import TokenBucket
from throttle.clock import FakeClock
