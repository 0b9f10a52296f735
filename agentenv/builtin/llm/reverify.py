"""``agentenv reverify RUN [--reward-logic FILE] [--rerun]``: rewards recomputed from stored trajectories.

The policy is never run again. Two ways, chosen per episode:

``stored`` (default)
    The composite reward is recomputed from the metrics of the scored runs the trajectory stored
    (``scored_runs`` of the last record that evaluated) under the new reward logic (``--reward-logic``,
    else the task's current one). No sandbox; milliseconds an episode. Right for a changed rule:
    new weights, thresholds, gates, aggregation.
``replay`` (``--rerun``, or whenever a rule names a reward model, which reads the final files)
    The stored actions are played again, in order, in a fresh sandbox of the task as it is now (a
    fixed test, a new hidden file), from the stored seed; the evaluation runs as it did. Each
    replayed observation is compared with the stored one: ``diverged_steps`` counts the steps whose
    output differs (a command that is not deterministic), and ``runtime_changed`` says when the
    runtime's content hash differs from the recorded fingerprint.

What a trajectory must hold for this, and does (``schemas/trajectory.schema.json``): every action in
order (single-shot: the program), the seed (``episode`` records of ``agentenv eval`` and
``RolloutPool``), the reward mode, the round budget (in the recorded prompt), the runtime fingerprint
and the metrics of every scored run. Agentic episodes are replayed from their actions, not from a
snapshot of the final files: files written by ``overwrite_file``/``apply_patch`` come back exactly,
files a command wrote come back when the command is deterministic, and ``diverged_steps`` flags the
episodes where that did not hold.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import threading
from typing import Any, Sequence

import agentenv

from ._records import Episode, episodes


def with_reward_logic(task: agentenv.TaskSpec, path: str) -> agentenv.TaskSpec:
    """*task* with the reward logic of *path* (a ``reward_logic`` object, or a task document whose
    ``reward_logic`` is taken), validated like any task: errors name *path* and the JSON pointer."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as exc:
        raise agentenv.ToolError(f"{path}: cannot read the reward logic: {exc.strerror}") from None
    except ValueError as exc:
        raise agentenv.ToolError(f"{path}: not JSON ({exc}); give a reward_logic object such as "
                           '{"type": "composite", "rules": [{"metric": "test_pass_rate", "weight": 1.0}]}') from None
    whole = isinstance(doc, dict) and "task_id" in doc
    merged = task.to_json()
    merged["reward_logic"] = doc.get("reward_logic") if whole else doc
    base = os.path.dirname(os.path.abspath(task.source)) if task.source != "<memory>" else "."
    try:
        return agentenv.parse_task(merged, source=path, base_dir=base, suite=task.suite)
    except agentenv.TaskSpecError as exc:
        if whole:
            raise
        inside = [agentenv.Violation(v.pointer[len("/reward_logic"):] if v.pointer.startswith("/reward_logic") else v.pointer,
                                     v.message, v.expected, v.found) for v in exc.violations]
        raise agentenv.TaskSpecError(path, inside) from None


def _stored(episode: Episode, task: agentenv.TaskSpec) -> dict[str, Any]:
    runs = episode.final.get("scored_runs") or []
    result = agentenv.compute_reward(task.reward, runs, agentenv.registry().metrics)
    return {"new_reward": result.total, "new_success": result.success, "reward_breakdown": result.breakdown()}


class _Replayer:
    """Replays episodes, one environment per thread and configuration (sandboxes are reused)."""

    def __init__(self, backend: str):
        self.backend = backend
        self.local = threading.local()
        self.envs: list[agentenv.CodingEnv] = []
        self.lock = threading.Lock()

    def env(self, task: agentenv.TaskSpec, mode: str, reward_mode: str, rounds: int) -> agentenv.CodingEnv:
        cache = getattr(self.local, "envs", None)
        if cache is None:
            cache = self.local.envs = {}
        key = (task.source, task.task_id, mode, reward_mode, rounds, id(task))
        if key not in cache:
            cache[key] = agentenv.CodingEnv(task, backend=self.backend, mode=mode, reward_mode=reward_mode,
                                            max_rounds=rounds if mode == agentenv.AGENTIC else None)
            with self.lock:
                self.envs.append(cache[key])
        return cache[key]

    def replay(self, episode: Episode, task: agentenv.TaskSpec) -> dict[str, Any]:
        env = self.env(task, episode.mode, str(episode.reset.get("reward_mode", "terminal")), episode.rounds(task.max_rounds))
        obs, info = env.reset(seed=episode.seed)
        total, diverged, done = 0.0, 0, bool(info.get("reward_masked"))
        actions = [(s.get("action"), str((s.get("observation") or {}).get("output", ""))) for s in episode.steps]
        for action, stored_output in actions:
            if done:
                break
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            diverged += obs["output"] != stored_output
            done = terminated or truncated
        while not done and episode.mode == agentenv.AGENTIC:  # the recording stopped early (agent error): submit
            obs, reward, terminated, truncated, info = env.step({"action": "submit"})
            total += reward
            done = terminated or truncated
        recorded = (episode.reset.get("runtime") or {}).get("hash")
        return {"new_reward": 0.0 if info.get("reward_masked") else total, "new_success": bool(info.get("success")),
                "reward_breakdown": info.get("reward_breakdown"), "diverged_steps": diverged,
                "runtime_changed": bool(recorded) and recorded != (info.get("runtime") or {}).get("hash"),
                "masked": bool(info.get("reward_masked")), "infra_error": info.get("infra_error")}

    def close(self) -> None:
        for env in self.envs:
            env.close()


def reverify(run: str, *, reward_logic: str | None = None, rerun: bool = False, workers: int = 2,
             backend: str = "auto", task_files: Sequence[str] = (), progress: bool = False
             ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Rescore every episode of *run*; returns one result per episode and the counts left out.
    *task_files* replace the installed task of the same id (a fixed copy, a task outside any suite)."""
    found, skipped = episodes(run)
    given = {}
    for path in task_files:
        task = agentenv.load_task(path)
        given[task.task_id] = task
    tasks: dict[str, agentenv.TaskSpec] = {}
    for episode in found:
        if episode.env_id not in tasks:
            task = given.get(episode.task_id) or agentenv.resolve_task(episode.env_id)
            tasks[episode.env_id] = with_reward_logic(task, reward_logic) if reward_logic else task
    replayer = _Replayer(backend)
    done = [0]
    lock = threading.Lock()

    def one(episode: Episode) -> dict[str, Any]:
        task = tasks[episode.env_id]
        models = any(rule.reward_model for rule in task.reward.rules)
        base = {"episode_id": episode.episode_id, "task_id": episode.task_id, "env_id": episode.env_id,
                "sample": episode.reset.get("sample"), "attempt": episode.reset.get("attempt"),
                "old_reward": episode.reward, "old_success": bool((episode.summary or episode.final).get("success")),
                "old_masked": episode.masked}
        if episode.masked:
            out = {**base, "method": "skipped", "new_reward": None, "new_success": None,
                   "why": "masked by an infrastructure failure when recorded: it was never scored"}
        elif rerun or models:
            out = {**base, "method": "replay", **replayer.replay(episode, task)}
        else:
            out = {**base, "method": "stored", **_stored(episode, task)}
        if out.get("new_reward") is not None:
            out["changed"] = abs(out["new_reward"] - out["old_reward"]) > 1e-9 or out["new_success"] != out["old_success"]
        if progress:
            with lock:
                done[0] += 1
                print(f"\r[reverify] {done[0]}/{len(found)}", end="", file=sys.stderr, flush=True)
        return out

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            results = list(pool.map(one, found))
    finally:
        replayer.close()
        if progress and found:
            print(file=sys.stderr)
    return results, skipped


def summary(results: list[dict[str, Any]]) -> str:
    scored = [r for r in results if r.get("new_reward") is not None]
    if not scored:
        return f"[reverify] {len(results)} episodes, none could be rescored"
    old = sum(r["old_reward"] for r in scored) / len(scored)
    new = sum(r["new_reward"] for r in scored) / len(scored)
    methods = sorted({r["method"] for r in scored})
    text = (f"[reverify] {len(scored)} episodes rescored ({', '.join(methods)}): {sum(r['changed'] for r in scored)} "
            f"changed; mean reward {old:.3f} -> {new:.3f}; successes {sum(r['old_success'] for r in scored)} -> "
            f"{sum(bool(r['new_success']) for r in scored)}")
    diverged = sum(1 for r in scored if r.get("diverged_steps"))
    if diverged:
        text += f"; {diverged} replays diverged from the recording (non-deterministic commands)"
    if any(r.get("runtime_changed") for r in scored):
        text += "; the runtime differs from the recorded fingerprint"
    skipped = len(results) - len(scored)
    return text + (f"; {skipped} masked episodes skipped" if skipped else "")


def configure(parser) -> None:
    parser.add_argument("run", metavar="RUN", help="an agentenv eval --out folder, or a trajectory JSONL file")
    parser.add_argument("--reward-logic", metavar="FILE", default=None,
                        help="a reward_logic JSON object (or a task file whose reward_logic is taken) to score with; "
                             "default: each task's current one")
    parser.add_argument("--rerun", action="store_true",
                        help="replay the stored actions in fresh sandboxes of the current task (a fixed task) "
                             "instead of recomputing from the stored metrics")
    parser.add_argument("--task", action="append", default=[], metavar="FILE",
                        help="use this task file for the episodes of its task id (a fixed task, or one outside the "
                             "installed suites); repeatable")
    parser.add_argument("--workers", "-w", type=int, default=2, help="episodes replayed at once (default 2)")
    parser.add_argument("--backend", default="auto", help="sandbox backend for replays (default: auto)")
    parser.add_argument("--out", "-o", default=None, help="write one JSON line per episode to this file")
    parser.add_argument("--json", action="store_true", help="print one JSON line per episode on stdout")


def run(args) -> int:
    results, skipped = reverify(args.run, reward_logic=args.reward_logic, rerun=args.rerun, workers=args.workers,
                                backend=args.backend, task_files=args.task, progress=sys.stderr.isatty())
    lines = "".join(json.dumps(r) + "\n" for r in results)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(lines)
    if args.json:
        sys.stdout.write(lines)
    else:
        for r in results:
            if r.get("new_reward") is None:
                continue
            mark = "*" if r["changed"] else " "
            print(f"{mark} {agentenv.visible(r['task_id']):<32} sample {r.get('sample')!s:<4} {r['old_reward']:.3f} -> {r['new_reward']:.3f}"
                  + (f"  ({r['diverged_steps']} steps diverged)" if r.get("diverged_steps") else ""))
    print(summary(results), file=sys.stderr)
    left = {k: v for k, v in skipped.items() if v}
    if left:
        print(f"[reverify] left out: {', '.join(f'{v} {k}' for k, v in left.items())}", file=sys.stderr)
    return 0
