"""Branch coverage of the module under the agent's tests (coverage.py), a metric beside the reward.

The tests run once on the module as given, under ``coverage run --branch``; the score is coverage's
total percentage (lines and branches) of the module, 0 when the tests do not pass. Coverage data
is written by the process that runs the agent's tests, so a test suite could inflate it: this is why
the suite's tasks give it weight 0 (shown in ``info["reward_breakdown"]``), and the reward is the
mutation score, which is decided outside the agent's processes.
"""

import json
import os
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import guard  # noqa: E402


def judge(g: guard.Guard) -> None:
    cfg = json.loads(g.files["subjects.json"])
    module, timeout = cfg["module"], float(cfg["timeout_s"])
    g.reset()
    target = os.path.join(g.workspace, module)
    with open(target, "w", encoding="utf-8") as f:
        f.write(cfg["original"])
    data = "/tmp/.coverage-data"
    run = g.run(["python", "-m", "coverage", "run", "--branch", f"--data-file={data}", f"--include={target}",
                 *cfg["command"][1:]], cwd=g.workspace, timeout=timeout)
    if not run.ok:
        g.finish(0.0, ["coverage: the tests do not pass on the module"])
        return
    guard.remove("/tmp/.coverage.json")  # the agent's processes are gone; what they left is not the report
    report = g.run(["python", "-I", "-m", "coverage", "json", f"--data-file={data}", "-o", "/tmp/.coverage.json"],
                   cwd="/tmp", timeout=timeout)
    try:
        with open("/tmp/.coverage.json") as f:
            totals = json.load(f)["totals"]
        percent = float(totals["percent_covered"])
    except (OSError, ValueError, KeyError, TypeError):
        g.finish(0.0, ["coverage: no coverage data", report.stderr.decode("utf-8", "replace")[-500:]])
        return
    g.finish(percent / 100.0, [f"coverage of {module}: {percent:.1f}% (lines and branches, "
                               f"{totals.get('missing_lines', '?')} lines and {totals.get('missing_branches', '?')} "
                               "branches missed)"])


if __name__ == "__main__":
    sys.exit(guard.main(judge))
