"""An ops script judged by the state it leaves in a fake root, and by running it twice.

For each hidden fixture (a fake root of the same shape as the workspace's ``fixture.tar``, with other
names, numbers and dates) the check lays the tree out at the same path, runs the agent's script on
a clean slate (guard.py), and compares the tree with the expected state (fstate.py): the share of
the required changes made, or 0 when anything else was changed or the script failed. Then the
workspace and scratch folders are reset again (a script cannot leave itself a note elsewhere) and
the script runs a second time: it must succeed and change nothing, or the fixture's score is halved.
The task's score is the mean over the fixtures; the visible fixture is not scored.
"""

import json
import os
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import fstate  # noqa: E402
import guard  # noqa: E402

ROOT = "/tmp/ops/root"


def judge(g: guard.Guard) -> None:
    cfg = json.loads(g.files["ops.json"])
    command = [a.replace("{root}", ROOT) for a in cfg["command"]]
    scores, lines = [], []
    for n, fixture in enumerate(cfg["fixtures"], start=1):
        g.reset()
        fstate.write_tree(ROOT, fixture["tree"])
        env = {"ROOT": ROOT, **fixture.get("env", {})}
        first = g.run(command, cwd=g.workspace, timeout=float(cfg["timeout_s"]), env=env)
        if not first.ok:
            why = "timed out" if first.timed_out else f"exited {first.exit_code}"
            scores.append(0.0)
            lines.append(f"fixture {n}: the script {why}: {first.stderr.decode('utf-8', 'replace')[-300:]}")
            continue
        state = fstate.read_tree(ROOT)
        score, problems = fstate.grade(fixture["tree"], fixture["expected"], state)
        g.reset(keep=(ROOT,))
        second = g.run(command, cwd=g.workspace, timeout=float(cfg["timeout_s"]), env=env)
        again = fstate.read_tree(ROOT)
        if not second.ok or again != state:
            score /= 2
            problems.append("not idempotent: the second run " + ("failed" if not second.ok else "changed the state again"))
        scores.append(score)
        lines.append(f"fixture {n}: {score:.2f}" + (f" ({'; '.join(problems)})" if problems else ""))
    g.finish(sum(scores) / len(scores), lines)


if __name__ == "__main__":
    sys.exit(guard.main(judge))
