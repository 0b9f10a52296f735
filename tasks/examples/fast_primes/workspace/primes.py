"""Prime numbers."""


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    return all(n % d for d in range(2, n))


def primes_below(n: int) -> list[int]:
    return [i for i in range(n) if is_prime(i)]
