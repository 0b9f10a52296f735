"""Order processing."""
from orders.errors import InvalidTransition
from orders.states import State
from orders.workflow import TRANSITIONS, Order

__all__ = ["InvalidTransition", "Order", "State", "TRANSITIONS"]
