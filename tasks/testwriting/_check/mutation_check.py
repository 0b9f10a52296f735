"""The testwriting suite's reward: the share of hidden mutants the agent's tests kill.

Gate: the tests must pass on the module as given and on each hidden behaviour-preserving variant
of it (rewritten the way a refactoring would); a test that fingerprints the source instead of
testing behaviour fails a variant and earns nothing. Every run sees the same paths and a clean slate
(guard.py), in a random order, so a test can tell a mutant from a variant only by what it computes.
A mutant is killed when the test command fails on it (a failing test, an error, a crash or a
time-out); tests that do not run (no test collected: exit status 5) fail the gate.
"""

import json
import os
import random
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import guard  # noqa: E402


def judge(g: guard.Guard) -> None:
    cfg = json.loads(g.files["subjects.json"])
    module, command, timeout = cfg["module"], cfg["command"], float(cfg["timeout_s"])
    subjects = [("module", "the module as given", cfg["original"])]
    subjects += [("variant", f"variant {v['name']}", v["source"]) for v in cfg["variants"]]
    subjects += [("mutant", f"{m['operator']} in {m['function']}", m["source"]) for m in cfg["mutants"]]
    order = list(range(len(subjects)))
    random.SystemRandom().shuffle(order)
    results = {}
    for i in order:
        kind, label, source = subjects[i]
        g.reset()
        with open(os.path.join(g.workspace, module), "w", encoding="utf-8") as f:
            f.write(source)
        result = g.run(command, cwd=g.workspace, timeout=timeout)
        results[i] = result
        if kind != "mutant" and not result.ok:
            why = "time-out" if result.timed_out else f"exit status {result.exit_code}"
            if kind == "module" and result.exit_code == 5:
                why = "no test was collected"
            lines = [f"gate failed: the tests fail on {label} ({why}); a test suite earns nothing unless it passes "
                     "on the module and on behaviour-preserving rewrites of it"]
            if kind == "module":
                lines.append(result.stdout.decode("utf-8", "replace")[-3000:])
            g.finish(0.0, lines)
            return
    mutants = [i for i, s in enumerate(subjects) if s[0] == "mutant"]
    killed = [i for i in mutants if not results[i].ok]
    survivors = sorted(subjects[i][1] for i in mutants if results[i].ok)
    lines = [f"gate passed: the tests pass on the module and its {len(cfg['variants'])} hidden variants",
             f"mutants killed: {len(killed)} of {len(mutants)}"]
    lines += [f"  survived: {label}" for label in survivors]
    g.finish(len(killed) / len(mutants) if mutants else 0.0, lines)


if __name__ == "__main__":
    sys.exit(guard.main(judge))
