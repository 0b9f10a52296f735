class InsufficientFunds(Exception):
    pass


class Account:
    def __init__(self, name: str, balance: int = 0):
        self.name = name
        self.balance = balance

    def withdraw(self, amount: int) -> None:
        if amount <= 0:
            raise ValueError("amount must be positive")
        if amount > self.balance:
            raise InsufficientFunds(f"{self.name} has {self.balance}, needs {amount}")
        self.balance -= amount

    def deposit(self, amount: int) -> None:
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.balance += amount
