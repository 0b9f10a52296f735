"""Order lifecycle."""
from __future__ import annotations

from orders.states import State
from orders.errors import InvalidTransition

TRANSITIONS: dict[State, set[State]] = {
    State.NEW: {State.PAID, State.CANCELLED},
    State.PAID: {State.SHIPPED, State.CANCELLED, State.REFUNDED},
    State.SHIPPED: {State.DELIVERED},
    State.DELIVERED: {State.REFUNDED},
    State.CANCELLED: set(),
    State.REFUNDED: set(),
}


class Order:
    def __init__(self, order_id: str) -> None:
        self.order_id = order_id
        self.state = State.NEW
        self.history: list[tuple[State, State]] = []

    def _go(self, target: State) -> None:
        if target not in TRANSITIONS[self.state]:
            raise InvalidTransition(f"{self.order_id}: {self.state.value} -> {target.value}")
        self.history.append((self.state, target))
        self.state = target

    def pay(self) -> None:
        self._go(State.PAID)

    def ship(self) -> None:
        self._go(State.SHIPPED)

    def deliver(self) -> None:
        self._go(State.DELIVERED)

    def cancel(self) -> None:
        self._go(State.CANCELLED)

    def refund(self) -> None:
        self._go(State.REFUNDED)

    @property
    def is_final(self) -> bool:
        return not TRANSITIONS[self.state]
