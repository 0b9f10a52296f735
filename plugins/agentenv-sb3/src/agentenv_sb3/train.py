"""``agentenv train``: PPO / A2C / DQN on a suite through one of the wrappers.

Writes into ``out``: ``model.zip`` + ``train.json`` (what ``sb3:DIR/model.zip`` needs to rebuild
the wrapper), ``curve.csv`` (environment steps, mean episode reward and success rate of the
recent episodes), ``progress.csv`` (SB3's logger), ``tb/`` (TensorBoard, when installed),
``checkpoints/`` and ``learning_curve.png`` with the random-policy baseline on the same axes.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import sys
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from ._common import CACHE, TrainingError, resolve_tasks
from ._defaults import DEFAULT_MAX_TOKENS

WRAPPERS = ("edit-choice", "tokens")
ALGOS = ("ppo", "a2c", "dqn")
DEFAULT_SUITE = {"edit-choice": "sb3.repair", "tokens": "sb3.synth"}


def resolve_device(device: str = "auto", say: Callable[[str], None] | None = print) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; says which and why."""
    import torch

    if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
        raise TrainingError(f"--device must be auto, cpu or cuda[:N], not {device!r}")
    if device == "auto":
        chosen = "cuda" if torch.cuda.is_available() else "cpu"
        why = f"auto: {torch.cuda.get_device_name(0)}" if chosen == "cuda" else "auto: no CUDA device found"
    else:
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise TrainingError(f"--device {device} was asked for but torch sees no CUDA device "
                                f"(torch {torch.__version__}); use --device auto or cpu")
        chosen, why = device, "as asked"
    if say:
        say(f"device: {chosen} ({why})")
    return chosen


def make_wrapped_env(wrapper: str, suite: str | None = None, tasks: Any = None, **kwargs: Any):
    """One wrapped env (picklable through functools.partial, for SubprocVecEnv workers)."""
    if wrapper == "edit-choice":
        from .edit_choice import EditChoiceEnv

        return EditChoiceEnv(tasks=tasks, suite=suite, **kwargs)
    if wrapper == "tokens":
        from .tokens import TokenSynthesisEnv

        return TokenSynthesisEnv(tasks=tasks, suite=suite, **kwargs)
    raise TrainingError(f"--wrapper must be one of {', '.join(WRAPPERS)}, not {wrapper!r}")


def wrapper_kwargs(wrapper: str, k: int = 8, rounds: int = 3, max_tokens: int = DEFAULT_MAX_TOKENS, cache: bool = True) -> dict:
    if wrapper == "edit-choice":
        return {"k": k, "rounds": rounds, "cache": cache}
    return {"max_tokens": max_tokens, "cache": cache}


# ---------------------------------------------------------------------------- baselines and evaluation

def random_baseline(env, episodes: int, seed: int = 0, tick: Callable[[int, int], None] | None = None) -> dict[str, float]:
    """Mean episode reward and success rate of uniformly random actions; ``tick(done, total)``
    after each episode (a progress bar)."""
    rng = np.random.default_rng(seed)
    rewards, successes = [], []
    for i in range(episodes):
        if tick is not None:
            tick(i, episodes)
        env.reset(seed=seed + i)
        total, done, info = 0.0, False, {}
        while not done:
            _, r, term, trunc, info = env.step(int(rng.integers(env.action_space.n)))
            total += r
            done = term or trunc
        rewards.append(total)
        successes.append(float(info.get("success", False)))
    if tick is not None:
        tick(episodes, episodes)
    return {"episodes": episodes, "mean_reward": float(np.mean(rewards)), "success_rate": float(np.mean(successes))}


def evaluate_policy_per_task(model, env, deterministic: bool = True, episodes_per_task: int = 1) -> dict[str, Any]:
    """Run *model* on every task of *env*; success rate overall and per task."""
    per_task: dict[str, float] = {}
    rewards = []
    for task in env.tasks:
        wins = 0
        for e in range(episodes_per_task):
            obs, _ = env.reset(seed=e, options={"task_id": task.task_id})
            total, done, info = 0.0, False, {}
            while not done:
                action, _ = model.predict(obs, deterministic=deterministic)
                obs, r, term, trunc, info = env.step(int(action))
                total += r
                done = term or trunc
            wins += bool(info.get("success"))
            rewards.append(total)
        per_task[task.task_id] = wins / episodes_per_task
    return {"success_rate": float(np.mean(list(per_task.values()))), "mean_reward": float(np.mean(rewards)),
            "per_task": per_task}


def random_search_solved(env, tries_per_task: int | dict[str, int], seed: int = 0,
                         distinct: bool = False) -> dict[str, bool]:
    """Which tasks of a token env uniformly random action sequences solve within a budget.

    The budget is *tries_per_task* episodes per task (a number, or a number per task id); with
    *distinct*, only episodes that run a program not seen before for that task count, which is
    the budget of distinct executions (repeats cost nothing with the execution cache). A task
    whose budget has been spent without a new program for 50x its size stops early.
    """
    rng = np.random.default_rng(seed)
    solved = {}
    for task in env.tasks:
        budget = tries_per_task[task.task_id] if isinstance(tries_per_task, dict) else tries_per_task
        solved[task.task_id], seen, spent, episodes = False, set(), 0, 0
        while spent < budget and episodes < 50 * max(budget, 1):
            env.reset(seed=seed + episodes, options={"task_id": task.task_id})
            episodes += 1
            done, info = False, {}
            while not done:
                _, _, term, trunc, info = env.step(int(rng.integers(env.action_space.n)))
                done = term or trunc
            program = info.get("program")
            if not distinct or program not in seen:
                spent += 1
                seen.add(program)
            if info.get("success"):
                solved[task.task_id] = True
                break
    return solved


# ---------------------------------------------------------------------------- training

@dataclass
class TrainResult:
    out: str
    model_path: str
    device: str
    steps: int
    seconds: float
    steps_per_s: float
    curve: list[dict[str, float]] = field(default_factory=list)
    random: dict[str, float] = field(default_factory=dict)
    evaluation: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, int] = field(default_factory=dict)
    episodes: int = 0
    found_in_training: dict[str, str] = field(default_factory=dict)
    programs_tried: dict[str, int] = field(default_factory=dict)  # tokens: distinct programs run, per task

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _curve_callback(curve: list[dict[str, float]], every: int, window: int):
    from stable_baselines3.common.callbacks import BaseCallback

    class CurveCallback(BaseCallback):
        """Mean reward and success rate of the last *window* finished episodes, every *every* steps."""

        def __init__(self):
            super().__init__()
            self.rewards: deque = deque(maxlen=window)
            self.successes: deque = deque(maxlen=window)
            self.next_at = every
            self.episodes = 0

        def _on_step(self) -> bool:
            for info, done in zip(self.locals.get("infos", []), self.locals.get("dones", [])):
                if done and "episode" in info:
                    self.episodes += 1
                    self.rewards.append(float(info["episode"]["r"]))
                    self.successes.append(float(bool(info.get("success"))))
            if self.num_timesteps >= self.next_at and self.rewards:
                curve.append({"steps": self.num_timesteps, "mean_reward": float(np.mean(self.rewards)),
                              "success_rate": float(np.mean(self.successes))})
                self.next_at += every
            return True

    return CurveCallback()


def finished_episodes(rewards: np.ndarray, starts: np.ndarray, last_done: np.ndarray,
                      tasks: np.ndarray) -> list[tuple[int, float, int, int, int, bool]]:
    """The episodes that ended inside one rollout: (task, return, env, first step, end, whole).

    *rewards*, *starts* (episode starts) and *tasks* (the task index of each step's observation)
    are ``(n_steps, n_envs)`` arrays; *last_done* says which env's final step ended an episode.
    ``whole`` is False for an episode that began in the previous rollout (its first steps are
    not in this one).
    """
    n_steps, n_envs = rewards.shape
    episodes = []
    for e in range(n_envs):
        begin = 0
        for t in range(1, n_steps + 1):
            if t == n_steps or starts[t, e]:
                if t < n_steps or last_done[e]:
                    episodes.append((int(tasks[begin, e]), float(rewards[begin:t, e].sum()), e, begin, t,
                                     bool(starts[begin, e])))
                begin = t
    return episodes


def risk_seeking_advantages(rewards: np.ndarray, starts: np.ndarray, last_done: np.ndarray, tasks: np.ndarray,
                            epsilon: float) -> np.ndarray:
    """Risk-seeking advantages of one rollout (after Petersen et al., *Deep symbolic regression*,
    ICLR 2021); the arrays are those of :func:`finished_episodes`.

    Episodes are grouped by task; within a group only the episodes at or above the
    (1 - epsilon) quantile of returns keep an advantage on each of their steps, their return
    less the group's mean (a GRPO-style baseline: with scores on a few discrete levels many
    episodes tie at the quantile, and ``R - R_epsilon`` would give them all 0); the rest get 0,
    and so does an episode still running at the end of the rollout. The policy then learns to
    make its *best* programs likelier instead of its average one, which is what synthesis asks
    for: an average-seeking policy settles on a one-token program with partial credit.
    """
    advantages = np.zeros_like(rewards, dtype=np.float32)
    groups: dict[int, list[tuple[float, int, int, int]]] = {}
    for task, ret, e, begin, end, _ in finished_episodes(rewards, starts, last_done, tasks):
        groups.setdefault(task, []).append((ret, e, begin, end))
    for episodes in groups.values():
        returns = np.array([ret for ret, *_ in episodes])
        threshold, baseline = float(np.quantile(returns, 1.0 - epsilon)), float(returns.mean())
        for ret, e, begin, end in episodes:
            if ret >= threshold and ret > baseline:
                advantages[begin:end, e] = ret - baseline
    return advantages


def _search_callback(risk_seeking: float | None, elite: int, elite_steps: int = 4, elite_coef: float = 1.0):
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    class SearchCallback(BaseCallback):
        """Risk-seeking advantages and/or imitation of each task's best programs.

        ``risk_seeking``: each rollout's advantages are replaced with :func:`risk_seeking_advantages`
        (the returns, the value function's target, stay as they are; PPO must not normalize
        advantages afterwards, or the zeros would turn negative).

        ``elite``: a memory keeps each task's *elite* best distinct episodes seen so far (return,
        observations, actions), and after every policy update a few gradient steps raise their
        log-likelihood (priority queue training, Abolafia et al. 2018; self-imitation). A program
        found once is then not forgotten, and the policy searches near it.
        """

        def __init__(self):
            super().__init__()
            self.memory: dict[int, dict[tuple, tuple[float, np.ndarray, np.ndarray]]] = {}

        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            buf = self.model.rollout_buffer
            last_done = np.asarray(self.locals["dones"], dtype=bool)
            tasks = buf.observations[..., -1]
            if risk_seeking is not None:
                buf.advantages[:] = risk_seeking_advantages(buf.rewards, buf.episode_starts, last_done, tasks,
                                                            risk_seeking)
            if elite:
                for task, ret, e, begin, end, whole in finished_episodes(buf.rewards, buf.episode_starts,
                                                                          last_done, tasks):
                    if not whole:
                        continue
                    actions = buf.actions[begin:end, e].astype(np.int64).reshape(-1)
                    best = self.memory.setdefault(task, {})
                    key = tuple(actions.tolist())
                    if key not in best:
                        best[key] = (ret, buf.observations[begin:end, e].copy(), actions)
                        if len(best) > elite:
                            del best[min(best, key=lambda k: best[k][0])]

        def _on_rollout_start(self) -> None:  # after the previous rollout's update
            if not elite or not self.memory:
                return
            obs = np.concatenate([o for best in self.memory.values() for _, o, _ in best.values()])
            actions = np.concatenate([a for best in self.memory.values() for _, _, a in best.values()])
            policy = self.model.policy
            obs_t = torch.as_tensor(obs, device=policy.device)
            act_t = torch.as_tensor(actions, device=policy.device)
            policy.set_training_mode(True)
            for _ in range(elite_steps):
                _, log_prob, _ = policy.evaluate_actions(obs_t, act_t)
                loss = -elite_coef * log_prob.mean()
                policy.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
                policy.optimizer.step()
            policy.set_training_mode(False)

    return SearchCallback()


ALGO_DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {
    # short episodes (a few rounds / tokens): small rollouts, a short horizon, some entropy
    "ppo": {"edit-choice": {"n_steps": 64, "batch_size": 64, "n_epochs": 8, "gamma": 0.9, "learning_rate": 1e-3,
                            "ent_coef": 0.01},
            # tuned on sb3.synth over 4 seeds (docs/training.md): a wider net, full-rollout batches and more
            # entropy keep sampling new programs while the elite memory holds on to the good ones
            "tokens": {"n_steps": 256, "batch_size": 256, "n_epochs": 10, "gamma": 1.0, "learning_rate": 1e-3,
                       "ent_coef": 0.04, "policy_kwargs": {"net_arch": [128, 128]}}},
    "a2c": {"edit-choice": {"n_steps": 8, "gamma": 0.9, "learning_rate": 2e-3, "ent_coef": 0.01},
            "tokens": {"n_steps": 16, "gamma": 1.0, "learning_rate": 1e-3, "ent_coef": 0.02}},
    "dqn": {"edit-choice": {"learning_starts": 200, "buffer_size": 20_000, "gamma": 0.9, "learning_rate": 1e-3,
                            "exploration_fraction": 0.5, "target_update_interval": 250, "train_freq": 4},
            "tokens": {"learning_starts": 500, "buffer_size": 50_000, "gamma": 1.0, "learning_rate": 5e-4,
                       "exploration_fraction": 0.5, "target_update_interval": 500, "train_freq": 4}},
}


# the risk-seeking epsilon used unless asked otherwise (None: plain advantages)
RISK_SEEKING_DEFAULT = {("ppo", "tokens"): 0.1, ("a2c", "tokens"): 0.1}
# how many best programs per task the policy imitates after each update (0: none)
ELITE_DEFAULT = {("ppo", "tokens"): 4, ("a2c", "tokens"): 4}


def train(suite: str | None = None, wrapper: str = "edit-choice", algo: str = "ppo", steps: int = 3000,
          envs: int = 4, device: str = "auto", out: str = "runs/train", seed: int = 0, k: int = 8, rounds: int = 3,
          max_tokens: int = DEFAULT_MAX_TOKENS, cache: bool = True, subproc: bool = False, progress_bar: bool = True,
          tensorboard: bool = True, random_episodes: int = 200, checkpoints: int = 4, plot: bool = True,
          curve_every: int | None = None, risk_seeking: float | str | None = "auto", elite: int | str = "auto",
          say: Callable[[str], None] = print, baseline_tick: Callable[[int, int], None] | None = None,
          **algo_kwargs: Any) -> TrainResult:
    """Train *algo* on *suite* through *wrapper*; see the module docstring for what is written.

    SB3 trains in whole rollouts, so the number of steps run is *steps* rounded up to a multiple of
    the rollout (``n_steps`` x *envs* for PPO/A2C, ``train_freq`` x *envs* for DQN); *say* is told
    when that differs. *random_episodes* = 0 skips the random-policy baseline."""
    if wrapper not in WRAPPERS:
        raise TrainingError(f"--wrapper must be one of {', '.join(WRAPPERS)}, not {wrapper!r}")
    if algo not in ALGOS:
        raise TrainingError(f"--algo must be one of {', '.join(ALGOS)}, not {algo!r}")
    if risk_seeking == "auto":
        risk_seeking = RISK_SEEKING_DEFAULT.get((algo, wrapper))
    if risk_seeking is not None and (algo == "dqn" or not 0 < risk_seeking <= 1):
        raise TrainingError(f"--risk-seeking takes an epsilon in (0, 1] and works with ppo or a2c, not "
                            f"{risk_seeking!r} with {algo}")
    if elite == "auto":
        elite = ELITE_DEFAULT.get((algo, wrapper), 0)
    if elite < 0 or elite and algo == "dqn":
        raise TrainingError(f"--elite takes a count >= 0 and works with ppo or a2c, not {elite!r} with {algo}")
    if steps < 1 or envs < 1:
        raise TrainingError(f"--steps and --envs must be >= 1, not {steps} and {envs}")
    if random_episodes < 0:
        raise TrainingError(f"--baseline-episodes must be >= 0, not {random_episodes}")
    import stable_baselines3 as sb3
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    suite = suite or DEFAULT_SUITE[wrapper]
    tasks = resolve_tasks(suite=suite)  # fail early, with the suite's own error, before any worker starts
    dev = resolve_device(device, say)
    if dev == "cpu":
        import torch

        # tiny MLPs gain nothing from intra-op threads, and they compete with the sandboxes for cores
        torch.set_num_threads(1)
    os.makedirs(out, exist_ok=True)
    kwargs = wrapper_kwargs(wrapper, k, rounds, max_tokens, cache)
    env_fn = functools.partial(make_wrapped_env, wrapper, suite, None, **kwargs)
    vec_cls, vec_kwargs = (SubprocVecEnv, {"start_method": "forkserver"}) if subproc and envs > 1 else (DummyVecEnv, None)
    vec = make_vec_env(env_fn, n_envs=envs, seed=seed, vec_env_cls=vec_cls, vec_env_kwargs=vec_kwargs)

    from stable_baselines3.common.logger import Logger, make_output_format

    outputs = [make_output_format("csv", out)]
    if tensorboard:
        try:
            import tensorboard as _tb  # noqa: F401

            outputs.append(make_output_format("tensorboard", os.path.join(out, "tb")))
        except ImportError:
            say("tensorboard is not installed: logging CSV only (pip install 'agentenv-sb3[tensorboard]')")
    logger = Logger(out, outputs)
    params = {**ALGO_DEFAULTS[algo][wrapper], **algo_kwargs}
    if risk_seeking is not None and algo == "ppo":
        params["normalize_advantage"] = False
    cls = {"ppo": sb3.PPO, "a2c": sb3.A2C, "dqn": sb3.DQN}[algo]
    model = cls("MlpPolicy", vec, seed=seed, device=dev, verbose=0, **params)
    model.set_logger(logger)

    curve: list[dict[str, float]] = []
    every = curve_every or max(steps // 20, envs)
    callbacks = [_curve_callback(curve, every, window=max(4 * envs, 20))]
    if risk_seeking is not None or elite:
        callbacks.append(_search_callback(risk_seeking, elite))
    if checkpoints > 0:
        callbacks.append(CheckpointCallback(save_freq=max(steps // (checkpoints * envs), 1),
                                            save_path=os.path.join(out, "checkpoints"), name_prefix="model"))
    runs = steps_run(algo, params, steps, envs)
    if runs != steps:
        per = params.get("n_steps", params.get("train_freq"))
        say(f"--steps {steps} is not a whole number of {algo.upper()} rollouts ({per} steps x {envs} env(s) = "
            f"{per * envs}): training runs {runs} steps")
    say(f"training {algo.upper()} on {suite} ({len(tasks)} tasks, wrapper {wrapper}) for {runs} steps "
        f"with {envs} env(s)")
    hits0, misses0 = CACHE.hits, CACHE.misses
    start = time.perf_counter()
    model.learn(total_timesteps=steps, callback=CallbackList(callbacks), progress_bar=progress_bar)
    seconds = time.perf_counter() - start
    found: dict[str, str] = {}
    tried: dict[str, set[str]] = {}
    if wrapper == "tokens":
        for env_found, env_tried in zip(vec.get_attr("found"), vec.get_attr("tried")):
            for task_id, program in env_found.items():
                found.setdefault(task_id, program)
            for task_id, programs in env_tried.items():
                tried.setdefault(task_id, set()).update(programs)
    vec.close()
    model_path = os.path.join(out, "model.zip")
    model.save(model_path)
    meta = {"algo": algo, "wrapper": wrapper, "suite": suite, "tasks": [t.task_id for t in tasks],
            "wrapper_kwargs": kwargs, "steps": steps, "seed": seed, "device": dev, "risk_seeking": risk_seeking,
            "elite": elite}
    if wrapper == "tokens":
        from .tokens import VOCAB

        meta["vocab"] = list(VOCAB)
    with open(os.path.join(out, "train.json"), "w") as f:
        json.dump(meta, f, indent=2)

    probe = make_wrapped_env(wrapper, suite, None, **kwargs)
    try:
        baseline: dict[str, float] = {}
        if random_episodes:
            say(f"random-policy baseline over {random_episodes} episodes (--baseline-episodes; 0 skips it)")
            baseline = random_baseline(probe, random_episodes, seed=seed + 10_000, tick=baseline_tick)
        evaluation = evaluate_policy_per_task(model, probe, deterministic=True)
    finally:
        probe.close()
    result = TrainResult(out, model_path, dev, int(model.num_timesteps), seconds, model.num_timesteps / seconds,
                         curve, baseline, evaluation,
                         {"hits": CACHE.hits - hits0, "misses": CACHE.misses - misses0} if not subproc else {},
                         callbacks[0].episodes, found, {t: len(p) for t, p in sorted(tried.items())})
    _write_curve(os.path.join(out, "curve.csv"), curve)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result.to_json(), f, indent=2)
    if plot:
        plot_curve(os.path.join(out, "learning_curve.png"), curve, baseline, f"{algo.upper()} on {suite} ({wrapper})")
    say(f"done: {result.steps} steps in {seconds:.1f} s ({result.steps_per_s:.0f} steps/s on {dev}); "
        f"policy success rate {evaluation['success_rate']:.2f} (deterministic, every task), "
        + (f"random {baseline['success_rate']:.2f}" if baseline else "no random baseline") + f"; wrote {out}")
    return result


def steps_run(algo: str, params: dict[str, Any], steps: int, envs: int) -> int:
    """The environment steps SB3 runs for ``learn(total_timesteps=steps)``: it collects whole
    rollouts, so *steps* rounds up to a multiple of one rollout."""
    per = params.get("n_steps") if algo in ("ppo", "a2c") else params.get("train_freq", 4)
    if not isinstance(per, int) or per < 1:  # e.g. DQN's train_freq=(1, "episode"): no fixed size
        return steps
    chunk = per * envs
    return -(-steps // chunk) * chunk


def _write_curve(path: str, curve: list[dict[str, float]]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["steps", "mean_reward", "success_rate"])
        writer.writeheader()
        writer.writerows(curve)


def plot_curve(path: str, curve: list[dict[str, float]], baseline: dict[str, float], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    xs = [p["steps"] for p in curve]
    for ax, key, label in ((axes[0], "mean_reward", "mean episode reward"), (axes[1], "success_rate", "success rate")):
        ax.plot(xs, [p[key] for p in curve], marker=".", label="policy")
        if baseline:
            ax.axhline(baseline[key], color="gray", linestyle="--", label="random policy")
        ax.set_xlabel("environment steps")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    axes[1].set_ylim(-0.05, 1.05)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main_print(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
