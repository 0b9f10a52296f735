"""Exact comparison of answers, shared by the logs suite's checks (a float matches at 4 decimals)."""


def same(answer, expected) -> bool:
    if isinstance(expected, bool) or expected is None:
        return answer is expected
    if isinstance(expected, float) or (isinstance(answer, float) and isinstance(expected, int)):
        return isinstance(answer, (int, float)) and not isinstance(answer, bool) and round(answer, 4) == round(expected, 4)
    if isinstance(expected, int):
        return type(answer) is int and answer == expected
    if isinstance(expected, str):
        return isinstance(answer, str) and answer == expected
    if isinstance(expected, list):
        return isinstance(answer, list) and len(answer) == len(expected) and all(map(same, answer, expected))
    if isinstance(expected, dict):
        return isinstance(answer, dict) and set(answer) == set(expected) and all(same(answer[k], expected[k])
                                                                                 for k in expected)
    return False


def grade(answers, expected: dict) -> tuple[int, list[str]]:
    """(fields right, the names of those that are wrong or missing)."""
    if not isinstance(answers, dict):
        return 0, sorted(expected)
    wrong = [k for k in expected if k not in answers or not same(answers[k], expected[k])]  # extra keys: ignored
    return len(expected) - len(wrong), wrong
