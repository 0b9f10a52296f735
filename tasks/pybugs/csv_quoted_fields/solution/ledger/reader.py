"""Read transactions from CSV text."""
from __future__ import annotations

from decimal import Decimal
from typing import Iterable

from ledger.model import Transaction


def split_row(line: str) -> list[str]:
    """Split one CSV line into fields, honouring double quotes and "" escapes."""
    fields: list[str] = []
    buf: list[str] = []
    in_quotes = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_quotes:
            if ch == '"':
                if i + 1 < len(line) and line[i + 1] == '"':
                    buf.append('"')
                    i += 1
                else:
                    in_quotes = False
            else:
                buf.append(ch)
        elif ch == '"':
            in_quotes = True
        elif ch == ",":
            fields.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    fields.append("".join(buf))
    return fields


def read_transactions(lines: Iterable[str], has_header: bool = True) -> list[Transaction]:
    """Parse ``date,description,amount`` rows; blank lines are skipped."""
    out: list[Transaction] = []
    rows = [ln.rstrip("\r\n") for ln in lines if ln.strip()]
    if has_header and rows:
        rows = rows[1:]
    for lineno, row in enumerate(rows, start=2 if has_header else 1):
        parts = split_row(row)
        if len(parts) != 3:
            raise ValueError(f"line {lineno}: expected 3 fields, got {len(parts)}")
        date, desc, amount = parts
        out.append(Transaction(date.strip(), desc.strip(), Decimal(amount.strip())))
    return out
