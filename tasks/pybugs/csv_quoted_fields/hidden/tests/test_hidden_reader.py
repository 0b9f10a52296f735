from ledger import read_transactions, split_row


def test_escaped_quotes():
    assert split_row('d,"He said ""hi"", ok",5') == ["d", 'He said "hi", ok', "5"]


def test_empty_fields():
    assert split_row('a,,""') == ["a", "", ""]


def test_description_preserved():
    txs = read_transactions(['2024-02-01,"Books, pens, paper",-12.40'], has_header=False)
    assert txs[0].description == "Books, pens, paper"
