from .accounts import Account, InsufficientFunds
from .ledger import Ledger, transfer
