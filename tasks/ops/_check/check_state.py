"""An ops script judged by the state it leaves in a fake root, and by running it again.

For each hidden fixture (a fake root of the same shape as the workspace's ``fixture.tar``, with other
names, numbers and dates) the check lays the tree out at the same path, runs the agent's script on
a clean slate (guard.py), and compares the tree with the expected state (fstate.py): the share of
the required changes made, or 0 when anything else was changed or the script failed. Then, in a
random order and each on a clean slate with the tree laid out afresh from data:

* **again**: the state the first run left (modes, contents, links; files it did not touch keep the
  fixture's times, those it made or changed get the time of the lay-out). The script must succeed
  and change nothing, or the fixture's score is halved. Nothing of the first run's tree survives
  but its state, so a note kept in what is not state (a time, an inode, an extended attribute) is
  gone.
* **replay**: the fixture itself once more, graded as the first run was; the fixture scores the
  lower of the two. A script that tells a later run from the first by what a run cannot reset (the
  sandbox's process and inode counters, say) and does nothing the second time loses the replay; it
  can tell "again" from "replay" only by the tree it is given, which is what idempotence means.

The task's score is the mean over the fixtures; the visible fixture is not scored.
"""

import json
import os
import random
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import fstate  # noqa: E402
import guard  # noqa: E402

ROOT = "/tmp/ops/root"


def judge(g: guard.Guard) -> None:
    cfg = json.loads(g.files["ops.json"])
    command = [a.replace("{root}", ROOT) for a in cfg["command"]]
    timeout = float(cfg["timeout_s"])
    scores, lines = [], []

    def run(tree: dict, env: dict) -> tuple[guard.Result, dict | None]:
        g.reset()
        fstate.write_tree(ROOT, tree)
        result = g.run(command, cwd=g.workspace, timeout=timeout, env=env)
        return result, (fstate.read_tree(ROOT) if result.ok else None)

    for n, fixture in enumerate(cfg["fixtures"], start=1):
        env = {"ROOT": ROOT, **fixture.get("env", {})}
        first, state = run(fixture["tree"], env)
        if state is None:
            why = "timed out" if first.timed_out else f"exited {first.exit_code}"
            scores.append(0.0)
            lines.append(f"fixture {n}: the script {why}: {first.stderr.decode('utf-8', 'replace')[-300:]}")
            continue
        score, problems = fstate.grade(fixture["tree"], fixture["expected"], state)
        later = {}
        for kind in random.SystemRandom().sample(["again", "replay"], 2):
            later[kind] = run(relaid(fixture["tree"], state) if kind == "again" else fixture["tree"], env)[1]
        replay = fstate.grade(fixture["tree"], fixture["expected"], later["replay"])[0] \
            if later["replay"] is not None else 0.0
        if replay < score:
            score = replay
            problems.append(f"run again on the same root it scored {replay:.2f}")
        if later["again"] != state:
            score /= 2
            problems.append("not idempotent: the second run " + ("failed" if later["again"] is None
                                                                 else "changed the state again"))
        scores.append(score)
        lines.append(f"fixture {n}: {score:.2f}" + (f" ({'; '.join(problems)})" if problems else ""))
    g.finish(sum(scores) / len(scores), lines)


def relaid(initial: dict, state: dict) -> dict:
    """*state* to lay out afresh: an entry the run left as it was keeps the fixture's time."""
    bare = fstate.strip_times(initial)
    return {rel: {**entry, "mtime": initial[rel]["mtime"]} if bare.get(rel) == entry and "mtime" in initial[rel]
            else entry for rel, entry in state.items()}


if __name__ == "__main__":
    sys.exit(guard.main(judge))
