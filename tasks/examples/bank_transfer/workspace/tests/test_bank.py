import pytest

from bank import Account, InsufficientFunds, Ledger, transfer


def test_ok():
    a, b = Account("a", 100), Account("b")
    transfer(a, b, 30)
    assert (a.balance, b.balance) == (70, 30)


def test_overdraft_refused():
    a, b = Account("a", 10), Account("b")
    with pytest.raises(InsufficientFunds):
        transfer(a, b, 50)
    assert (a.balance, b.balance) == (10, 0)


def test_ledger_only_successful():
    a, b, ledger = Account("a", 10), Account("b"), Ledger()
    transfer(a, b, 5, ledger)
    with pytest.raises(InsufficientFunds):
        transfer(a, b, 50, ledger)
    assert ledger.entries == [("a", "b", 5)]
