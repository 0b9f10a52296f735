import pytest

from bank import Account, InsufficientFunds


def test_withdraw_refuses_overdraft():
    a = Account("a", 3)
    with pytest.raises(InsufficientFunds):
        a.withdraw(4)
    assert a.balance == 3


def test_exact_balance_allowed():
    a = Account("a", 4)
    a.withdraw(4)
    assert a.balance == 0
