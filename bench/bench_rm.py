"""Latency of the readability reward model per 100-line file on the CPU, measured side by side in one
run with the signals it replaces.

    .venv/bin/python bench/bench_rm.py [--iterations N] [--threads N] [--checkpoint PT] [--json FILE]

Rows (milliseconds per file; every iteration scores new content, so no cache answers):

* tokenize and cut into units only (the Python side of the model);
* the model on one file (what one episode pays), and on 32 files in one batch (per file);
* the built-in ``reference_similarity`` (difflib against a reference), radon's maintainability index
  and ruff's lint count on the same file, for scale.

The target of issue 15 is under 10 ms per 100-line file on the CPU.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from bench_quality import python_file as code_file
from bench_quality import table, timed


def python_file(seed: int) -> str:
    """100 lines of real code; a different comment per seed, so the scorer's content cache never
    answers."""
    return code_file(seed).decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--checkpoint", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    import torch

    import agentenv
    from agentenv_quality import lint_python, maintainability
    from agentenv_rm.reward import BUNDLED_CHECKPOINT
    from agentenv_rm.scorer import Scorer, _pool_small, units

    if args.threads:
        torch.set_num_threads(args.threads)
    scorer = Scorer(args.checkpoint or BUNDLED_CHECKPOINT)
    n = args.iterations
    counter = iter(range(10 ** 9))
    reference = python_file(-1)
    similarity = agentenv.registry().reward_models["reference_similarity"]
    task = agentenv.parse_task({"task_id": "bench.rm", "environment_config": {"runtime": "python3"},
                                "execution_steps": [{"action": "run_command", "command": "true"}],
                                "reward_logic": {"type": "composite", "rules": [{"metric": "exit_code", "weight": 1,
                                                                                 "threshold": 1}]}})

    def tokenize_only():
        _pool_small(units(python_file(next(counter))))  # what score_files does before the network

    def model_one():
        scorer.score_files({"solution.py": python_file(next(counter))})

    def model_batch():
        scorer.score_files({f"f{i}.py": python_file(next(counter)) for i in range(32)})

    def ref_sim():
        code = python_file(next(counter))
        similarity.score(agentenv.EpisodeView(task, {"f.py": code.encode()}, {"f.py": reference.encode()}, ()), {})

    def radon_mi():
        maintainability(python_file(next(counter)))

    def ruff():
        lint_python({"f.py": python_file(next(counter)).encode()})

    rows = [("tokenize + cut into units only", timed(tokenize_only, n), 1),
            ("readability model, 1 file", timed(model_one, n), 1),
            ("readability model, 32 files in one batch (per file)", timed(model_batch, max(5, n // 4)), 32),
            ("reference_similarity (difflib)", timed(ref_sim, n), 1),
            ("maintainability index (radon)", timed(radon_mi, n), 1),
            ("lint count (ruff, a process per call)", timed(ruff, n), 1)]
    base = statistics.median(rows[1][1][0])
    report = table(rows, base, "x model")
    lines = len(python_file(0).splitlines())
    print(f"({lines}-line file, {len(units(python_file(0)))} units; torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; {n} iterations)")
    cpu = statistics.median(rows[1][1][1])
    print(f"target under 10 ms per 100-line file on the CPU: {'met' if base < 10 else 'NOT met'} "
          f"({base:.2f} ms wall, {cpu:.2f} ms of CPU)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
