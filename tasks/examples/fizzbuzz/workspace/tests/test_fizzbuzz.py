from fizzbuzz import fizzbuzz


def test_length():
    assert len(fizzbuzz(15)) == 15


def test_small():
    assert fizzbuzz(5) == ["1", "2", "Fizz", "4", "Buzz"]


def test_fifteen():
    assert fizzbuzz(15)[-1] == "FizzBuzz"


def test_empty():
    assert fizzbuzz(0) == []
