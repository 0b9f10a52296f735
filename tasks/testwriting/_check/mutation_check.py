"""The testwriting suite's reward: the share of hidden mutants the agent's tests kill.

Gate: the tests must pass on the module as given and on each hidden behaviour-preserving variant
of it (rewritten the way a refactoring would); a test that fingerprints the source instead of
testing behaviour fails a variant and earns nothing. Every run sees the same paths and a clean slate
(guard.py); the module runs first, the variants and mutants after it in a random order, so a test
can tell a mutant from a variant only by what it computes.
A mutant is killed when the test command fails on it (a failing test, an error, a crash or a
time-out); tests that do not run (no test collected: exit status 5) fail the gate.
"""

import json
import os
import random
import re
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import guard  # noqa: E402


GATE = "a test suite earns nothing unless it passes on the module and on behaviour-preserving rewrites of it"


def _run(g: guard.Guard, module: str, command: list[str], timeout: float, source: str) -> guard.Result:
    g.reset()
    with open(os.path.join(g.workspace, module), "w", encoding="utf-8") as f:
        f.write(source)
    return g.run(command, cwd=g.workspace, timeout=timeout)


def _why(result: guard.Result) -> str:
    return "time-out" if result.timed_out else f"exit status {result.exit_code}"


def _untimed(text: str) -> str:
    """pytest's output without the time it took (``1 failed in 0.12s``)."""
    return re.sub(r" in \d+(\.\d+)?s( \(\d+:\d\d:\d\d\))?", " in <time>", text)


def judge(g: guard.Guard) -> None:
    cfg = json.loads(g.files["subjects.json"])
    module, command, timeout = cfg["module"], cfg["command"], float(cfg["timeout_s"])
    subjects = [("module", "the module as given", cfg["original"])]
    subjects += [("variant", f"variant {v['name']}", v["source"]) for v in cfg["variants"]]
    subjects += [("mutant", f"{m['operator']} in {m['function']}", m["source"]) for m in cfg["mutants"]]
    # The module first (it is no secret which run that is: tests must pass on it anyway), then the
    # variants and mutants shuffled. A failed gate names what failed in the same words whatever the
    # order, so the same tests always get the same observation.
    rest = list(range(1, len(subjects)))
    random.SystemRandom().shuffle(rest)
    results = {}
    for i in [0, *rest]:
        results[i] = _run(g, module, command, timeout, subjects[i][2])
        if subjects[i][0] == "module" and not results[i].ok:
            why = "no test was collected" if results[i].exit_code == 5 else _why(results[i])
            g.finish(0.0, [f"gate failed: the tests fail on the module as given ({why}); {GATE}",
                           _untimed(results[i].stdout.decode("utf-8", "replace")[-3000:])])
            return
        if subjects[i][0] == "variant" and not results[i].ok:
            for j, (kind, _, source) in enumerate(subjects):  # every variant, so the message is whole
                if kind == "variant" and j not in results:
                    results[j] = _run(g, module, command, timeout, source)
            failed = [f"{label} ({_why(results[j])})" for j, (kind, label, _) in enumerate(subjects)
                      if kind == "variant" and not results[j].ok]
            g.finish(0.0, [f"gate failed: the tests fail on {', '.join(failed)}; {GATE}"])
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
