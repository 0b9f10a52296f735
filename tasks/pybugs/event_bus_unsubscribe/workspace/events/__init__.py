"""events package."""
from events.bus import EventBus
from events.errors import HandlerErrors
