"""The ``sb3`` agent: ``agentenv run/eval --agent sb3:DIR/model.zip`` plays a trained policy.

It reads ``DIR/train.json`` (written by ``agentenv train``) to rebuild the wrapper the policy was
trained through. Token policies need no feedback: the program is generated up front. Edit-choice
policies learn from execution feedback, so the agent rolls the policy out in its own
edit-choice environment for the task (its own sandboxes: a scratch workspace, like a developer
running the tests locally), then replays the chosen edits in the scored environment and submits;
the scored environment's evaluation alone decides the reward.

``sb3-best:DIR/model.zip`` (token policies only) plays, for each task, the program that solved it
during training (``found_in_training`` in ``DIR/result.json``), the output of a search run as in
program synthesis, and the policy's own program for the tasks training did not solve. The scored
environment runs it again; nothing is taken on trust.
"""

from __future__ import annotations

import json
import os
from typing import Any

from agentenv import Agent, TaskSpec

from ._common import TrainingError
from ._defaults import DEFAULT_MAX_TOKENS


def load_trained(path: str):
    """(model, train.json metadata) for a model file written by ``agentenv train``."""
    if not path:
        raise TrainingError("the sb3 agent needs a model file: --agent sb3:DIR/model.zip")
    if not os.path.exists(path):
        raise TrainingError(f"sb3 agent: model file {path} does not exist (agentenv train --out DIR writes DIR/model.zip)")
    meta_path = os.path.join(os.path.dirname(os.path.abspath(path)), "train.json")
    try:
        meta = json.load(open(meta_path))
    except (OSError, ValueError) as exc:
        raise TrainingError(f"sb3 agent: cannot read {meta_path} ({exc}); it is written beside model.zip by "
                            "agentenv train and says which wrapper the policy was trained through") from exc
    if meta.get("wrapper") == "tokens":
        from .tokens import VOCAB

        if meta.get("vocab") != list(VOCAB):
            raise TrainingError(f"sb3 agent: the token policy {path} was trained on the vocabulary "
                                f"{meta.get('vocab', '(an older one)')}, not this version's {list(VOCAB)}; "
                                "train it again with agentenv train --wrapper tokens")
    import stable_baselines3 as sb3

    cls = {"ppo": sb3.PPO, "a2c": sb3.A2C, "dqn": sb3.DQN}[meta["algo"]]
    return cls.load(path, device="cpu"), meta


class Sb3Agent(Agent):
    name = "sb3"

    def __init__(self, path: str, best: bool = False):
        self.model, self.meta = load_trained(path)
        self.pending: list[Any] = []
        self.found: dict[str, str] = {}
        if best:
            self.name = "sb3-best"
            self.found = _found_in_training(path, self.meta)

    def reset(self, task: TaskSpec, mode: str, seed: int | None = None) -> None:
        self.task, self.mode = task, mode
        files = self._solve(task, seed)
        self.files = files
        self.pending = [{"action": "overwrite_file", "path": p, "content": c} for p, c in sorted(files.items())]
        self.pending.append({"action": "submit"})

    def _solve(self, task: TaskSpec, seed: int | None) -> dict[str, str]:
        wrapper, kwargs = self.meta["wrapper"], dict(self.meta.get("wrapper_kwargs") or {})
        if wrapper == "tokens":
            from .tokens import TokenSynthesisEnv

            ids = self.meta["tasks"]
            if task.task_id not in ids:
                raise TrainingError(f"sb3 agent: this token policy was trained on {self.meta['suite']} and knows "
                                    f"tasks {', '.join(ids)}; {task.task_id} is not one of them")
            if task.task_id in self.found:
                return {task.single_shot_path: self.found[task.task_id]}
            env = TokenSynthesisEnv(tasks=[_load(i, task) for i in ids], execute=False,
                                    max_tokens=kwargs.get("max_tokens", DEFAULT_MAX_TOKENS))
        else:
            from .edit_choice import EditChoiceEnv

            env = EditChoiceEnv(tasks=[task], k=kwargs.get("k", 8), rounds=kwargs.get("rounds", 3),
                                cache=kwargs.get("cache", True))
        try:
            obs, _ = env.reset(seed=seed, options={"task_id": task.task_id})
            done = False
            while not done:
                action, _ = self.model.predict(obs, deterministic=True)
                obs, _, term, trunc, _ = env.step(int(action))
                done = term or trunc
            if wrapper == "tokens":
                return {task.single_shot_path: env.last_program}
            return env.solution_files()
        finally:
            env.close()

    def act(self, observation, info):
        if self.mode == "single_shot":
            path = self.task.single_shot_path
            if path in self.files:
                return self.files[path]
            return self.task.workspace.read().get(path, b"").decode()
        return self.pending.pop(0) if self.pending else {"action": "submit"}


def _found_in_training(path: str, meta: dict[str, Any]) -> dict[str, str]:
    if meta.get("wrapper") != "tokens":
        raise TrainingError(f"sb3-best agent: {path} is an {meta.get('wrapper')} policy; sb3-best plays the programs a "
                            f"token run found (--wrapper tokens); use sb3:{path} for this one")
    result_path = os.path.join(os.path.dirname(os.path.abspath(path)), "result.json")
    try:
        found = json.load(open(result_path))["found_in_training"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TrainingError(f"sb3-best agent: cannot read found_in_training from {result_path} ({exc!r}); "
                            "agentenv train writes it when a run finishes: train again, or use sb3:") from exc
    if not isinstance(found, dict) or not all(isinstance(v, str) for v in found.values()):
        raise TrainingError(f"sb3-best agent: {result_path} /found_in_training must map task ids to program texts")
    return found


def _load(task_id: str, current: TaskSpec) -> TaskSpec:
    if task_id == current.task_id:
        return current
    import gymnasium as gym

    from ._common import resolve_tasks

    env_ids = [i for i in gym.registry if i.startswith(f"agentenv/{task_id}-v")]
    if not env_ids:
        raise TrainingError(f"sb3 agent: training task {task_id} is not installed (is agentenv-sb3 installed?)")
    return resolve_tasks(sorted(env_ids)[-1])[0]


def make_sb3_agent(arg: str | None, task: TaskSpec, mode: str, best: bool = False) -> Agent:
    return Sb3Agent(arg or "", best=best)
