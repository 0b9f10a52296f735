"""Questions about the logs in the workspace, answered in /app/answers.json and checked exactly.

No agent code runs here: the check reads the answer file the agent left and compares each field
with the answer computed from the events that produced the logs. The score is the share of fields
that are right.
"""

import json
import os
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import guard  # noqa: E402


def judge(g: guard.Guard) -> None:
    expected = json.loads(g.files["expected.json"])
    entry = g.snapshot.get("answers.json")
    if entry is None or entry[0] != "f":
        g.finish(0.0, ["no answers.json in the workspace"])
        return
    try:
        answers = json.loads(entry[2].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # (nested past the parser's depth)
        g.finish(0.0, [f"answers.json is not JSON: {type(exc).__name__}: {exc}"])
        return
    right, wrong = compare.grade(answers, expected)
    lines = [f"{right} of {len(expected)} answers right"] + [f"  wrong or missing: {k}" for k in wrong]
    g.finish(right / len(expected), lines)


if __name__ == "__main__":
    sys.exit(guard.main(judge))
