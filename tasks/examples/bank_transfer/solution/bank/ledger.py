from .accounts import Account


class Ledger:
    def __init__(self):
        self.entries: list[tuple[str, str, int]] = []

    def record(self, src: Account, dst: Account, amount: int) -> None:
        self.entries.append((src.name, dst.name, amount))


def transfer(src: Account, dst: Account, amount: int, ledger: Ledger | None = None) -> None:
    src.withdraw(amount)  # raises before anything moves
    dst.deposit(amount)
    if ledger is not None:
        ledger.record(src, dst, amount)
