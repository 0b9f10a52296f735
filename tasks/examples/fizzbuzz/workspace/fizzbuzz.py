"""FizzBuzz, the classic."""


def label(i: int) -> str:
    if i % 3 == 0:
        return "Fizz"
    if i % 5 == 0:
        return "Buzz"
    return str(i)


def fizzbuzz(n: int) -> list[str]:
    """Labels for 1..n inclusive."""
    return [label(i) for i in range(1, n)]
