"""Does training beat random, side by side in one run? (agentenv-sb3)

    .venv/bin/python bench/bench_train.py [--repair-steps 3000] [--synth-steps 36000] [--device auto]

Repair suite (edit-choice wrapper): PPO's learning curve next to the random policy's success
rate; the target is PPO >= 0.9 with random < 0.4. Synthesis suite (token wrapper): the tasks
PPO's training found a program for (what the sb3-best agent plays) and those its deterministic
policy solves, against random search given the same number of episodes per task; the target is
that PPO solves at least half of the tasks random search does not. Random
search is also given as many distinct programs per task as PPO ran (repeats cost nothing with
the execution cache), the stricter comparison.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repair-steps", type=int, default=3000)
    p.add_argument("--synth-steps", type=int, default=36000)
    p.add_argument("--envs", type=int, default=4)
    p.add_argument("--device", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-synth", action="store_true")
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = p.parse_args()

    import agentenv  # noqa: F401  (registers the suites)
    from agentenv_sb3.train import make_wrapped_env, random_search_solved, train

    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    report: dict = {}
    out = tempfile.mkdtemp(prefix="bench_train_")
    print("== repair suite, edit-choice wrapper, PPO")
    r = train(suite="sb3.repair", wrapper="edit-choice", steps=args.repair_steps, envs=args.envs, device=args.device,
              out=f"{out}/repair", seed=args.seed, progress_bar=False, random_episodes=300, say=say)
    print(f"{'steps':>7} {'PPO reward':>11} {'PPO success':>12} {'random reward':>14} {'random success':>15}")
    for point in r.curve:
        print(f"{point['steps']:>7} {point['mean_reward']:>11.3f} {point['success_rate']:>12.2f} "
              f"{r.random['mean_reward']:>14.3f} {r.random['success_rate']:>15.2f}")
    print(f"final deterministic success: PPO {r.evaluation['success_rate']:.2f} vs random "
          f"{r.random['success_rate']:.2f} (target >= 0.9 vs < 0.4); {r.seconds:.0f} s, "
          f"{r.steps_per_s:.0f} steps/s on {r.device}; cache {r.cache}")
    report["repair"] = r.to_json()

    if not args.skip_synth:
        print("== synthesis suite, token wrapper, PPO vs random search")
        s = train(suite="sb3.synth", wrapper="tokens", steps=args.synth_steps, envs=args.envs, device=args.device,
                  out=f"{out}/synth", seed=args.seed, progress_bar=False, random_episodes=300, say=say)
        env = make_wrapped_env("tokens", "sb3.synth", None)
        per_task = max(1, s.episodes // len(env.tasks))  # the same number of episodes PPO had
        start = time.perf_counter()
        rnd = random_search_solved(env, per_task, seed=args.seed)
        rnd_distinct = random_search_solved(env, s.programs_tried, seed=args.seed, distinct=True)
        env.close()
        ppo = {t: rate >= 1.0 for t, rate in s.evaluation["per_task"].items()}
        found = s.found_in_training
        mark = lambda ok, word: word if ok else "-"  # noqa: E731
        print(f"{'task':<26} {'PPO policy':>11} {'PPO training':>13} {'programs':>9} {'random, same':>13} "
              f"{'random, same':>13}")
        print(f"{'':<26} {'':>11} {'':>13} {'tried':>9} {'episodes':>13} {'programs':>13}")
        for t in rnd:
            print(f"{t:<26} {mark(ppo[t], 'solved'):>11} {mark(t in found, 'found'):>13} "
                  f"{s.programs_tried.get(t, 0):>9} {mark(rnd[t], 'found'):>13} {mark(rnd_distinct[t], 'found'):>13}")
        print(f"random search: {per_task} episodes per task, then PPO's distinct programs per task "
              f"({time.perf_counter() - start:.0f} s); PPO {s.seconds:.0f} s, {s.steps_per_s:.0f} steps/s on {s.device}")
        report["synth"] = {**s.to_json(), "random_search_episodes_per_task": per_task}
        for name, baseline in (("same episodes", rnd), ("same distinct programs", rnd_distinct)):
            hard = [t for t, ok in baseline.items() if not ok]
            won = [t for t in hard if ppo[t]]
            print(f"random search ({name}) misses {len(hard)} task(s); of those PPO's deterministic policy solves "
                  f"{len(won)} and its training found {len([t for t in hard if t in found])} (played by sb3-best; "
                  "target >= half)")
            report["synth"][f"random_search ({name})"] = {"solved": baseline, "ppo_wins": won}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    print(f"outputs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
