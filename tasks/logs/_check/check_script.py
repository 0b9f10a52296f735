"""The agent's log-analysis script, run on hidden logs of the same shape as the visible ones.

Each hidden log set is written over the visible logs' paths (so the script is called exactly as on
the visible logs), the script runs on a clean slate (guard.py), and its standard output must be one
JSON object whose fields equal the answers computed from the events behind that log. The visible
logs are not scored, and a field is graded on a hidden log only where its answer differs from the
visible log's (build.py), so an answer written down for the visible log earns exactly nothing. The
score is the share of graded (log set, field) pairs that are right; extra keys are ignored.
"""

import gzip
import json
import os
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import guard  # noqa: E402


def judge(g: guard.Guard) -> None:
    cfg = json.loads(g.files["script.json"])
    total = right = 0
    lines = []
    for n, logset in enumerate(cfg["sets"], start=1):
        g.reset()
        for rel in logset["files"]:
            data = gzip.decompress(g.files[f"sets/{n}/{os.path.basename(rel)}.gz"])
            path = os.path.join(g.workspace, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        result = g.run(cfg["command"] + logset["files"], cwd=g.workspace, timeout=float(cfg["timeout_s"]))
        expected = logset["expected"]
        total += len(expected)
        try:
            answers = json.loads(result.stdout.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):  # (nested past the parser's depth)
            why = "timed out" if result.timed_out else f"exit status {result.exit_code}"
            lines.append(f"hidden log set {n}: the output is not one JSON object ({why})")
            continue
        ok, wrong = compare.grade(answers, expected)
        right += ok
        lines.append(f"hidden log set {n}: {ok} of {len(expected)} fields right"
                     + (f" (wrong or missing: {', '.join(wrong)})" if wrong else ""))
    g.finish(right / total if total else 0.0, lines)


if __name__ == "__main__":
    sys.exit(guard.main(judge))
