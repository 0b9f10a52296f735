"""Sandbox cost, side by side in one run: ``python bench/bench_sandbox.py [--iterations N] [--json FILE]``.

The same as ``agentenv bench``; exits 1 when a target (warm p50, docker ratio, idle memory) is missed.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from agentenv.builtin.bench import main  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    sys.exit(main(iterations=args.iterations, json_out=args.json))
