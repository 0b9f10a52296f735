"""``agentenv train`` and ``agentenv train-text``."""

from __future__ import annotations

import json
import sys

from ._defaults import DEFAULT_MAX_TOKENS


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _bar(label: str):
    """A progress bar on stderr when it is a terminal (``tick(done, total)``), else None."""
    if not sys.stderr.isatty():
        return None

    def tick(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}{end}")
        sys.stderr.flush()
    return tick


def configure_train(p) -> None:
    p.add_argument("--suite", default=None, help="suite name or path (default: sb3.repair for edit-choice, "
                   "sb3.synth for tokens)")
    p.add_argument("--wrapper", choices=("edit-choice", "tokens"), default="edit-choice",
                   help="edit-choice: pick one of K candidate edits; tokens: write a program token by token")
    p.add_argument("--algo", choices=("ppo", "a2c", "dqn"), default="ppo", help="stable-baselines3 algorithm")
    p.add_argument("--steps", type=int, default=3000, help="environment steps, rounded up to whole rollouts "
                   "(the run says when)")
    p.add_argument("--envs", type=int, default=4, help="parallel environments")
    p.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda[:N]")
    p.add_argument("--out", default="runs/train", help="output folder")
    p.add_argument("--seed", type=int, default=0, help="seed of the policy and the environments")
    p.add_argument("--baseline-episodes", type=int, default=200, metavar="N",
                   help="episodes of the random-policy baseline drawn in the learning curve (0 skips it)")
    p.add_argument("--k", type=int, default=8, help="edit-choice: candidate edits (actions)")
    p.add_argument("--rounds", type=int, default=3, help="edit-choice: edits per episode")
    p.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, help="tokens: program length limit")
    p.add_argument("--risk-seeking", type=float, default=None, metavar="EPS",
                   help="ppo/a2c: keep only each task's top-EPS episodes of a rollout (default 0.1 for tokens, "
                   "off for edit-choice; 0 turns it off)")
    p.add_argument("--elite", type=int, default=None, metavar="K",
                   help="ppo/a2c: imitate each task's K best distinct programs after every update (default 4 for "
                   "tokens, 0 for edit-choice; 0 turns it off)")
    p.add_argument("--subproc", action="store_true", help="SubprocVecEnv (forkserver) instead of DummyVecEnv")
    p.add_argument("--no-cache", action="store_true", help="run every workspace state in a sandbox, even seen ones")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")


def run_train(args) -> int:
    from .train import train

    result = train(suite=args.suite, wrapper=args.wrapper, algo=args.algo, steps=args.steps, envs=args.envs,
                   device=args.device, out=args.out, seed=args.seed, k=args.k, rounds=args.rounds,
                   max_tokens=args.max_tokens, cache=not args.no_cache, subproc=args.subproc,
                   risk_seeking="auto" if args.risk_seeking is None else (args.risk_seeking or None),
                   elite="auto" if args.elite is None else args.elite,
                   progress_bar=not args.no_progress and sys.stderr.isatty(), say=_say,
                   random_episodes=args.baseline_episodes,
                   baseline_tick=None if args.no_progress else _bar("random-policy baseline"))
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        for task_id, rate in result.evaluation["per_task"].items():
            print(f"{task_id:<32} {'solved' if rate >= 1 else 'unsolved' if rate == 0 else f'{rate:.2f}'}")
        if result.found_in_training:
            print(f"found during training (first success per task): {len(result.found_in_training)} task(s); "
                  f"agentenv eval --agent sb3-best:{result.model_path} plays them")
        print(f"model: {result.model_path}  (agentenv eval --agent sb3:{result.model_path})")
    return 0


def configure_train_text(p) -> None:
    p.add_argument("--suite", default="sb3.synth", help="suite of single-shot tasks (default sb3.synth)")
    p.add_argument("--iterations", type=int, default=20, help="training iterations over the suite")
    p.add_argument("--group", type=int, default=8, help="completions sampled per task and iteration")
    p.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda[:N]")
    p.add_argument("--out", default="runs/text", help="output folder")
    p.add_argument("--seed", type=int, default=0, help="seed of the model and the sampling")


def run_train_text(args) -> int:
    from .text_policy import train_text_policy

    log = train_text_policy(suite=args.suite, iterations=args.iterations, group=args.group, device=args.device,
                            out=args.out, seed=args.seed, say=_say)
    print(f"{len(log)} task-rounds logged to {args.out}/text_policy.csv")
    return 0
