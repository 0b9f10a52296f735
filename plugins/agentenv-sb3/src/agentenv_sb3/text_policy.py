"""A minimal torch trainer for text policies: REINFORCE with a group baseline (GRPO-style).

The loop an LLM post-training framework runs, at toy scale: for each task, sample a group of G
completions from a tiny character-level GRU conditioned on the task, hand them as actions to G
copies of the task's *single-shot* environment (``gymnasium.make_vec``, sync), score each with
the task's own composite reward, and push up the log-probability of completions that beat their
group's mean (advantage = (r - mean) / (std + eps)). Completions fill the task's template
(``metadata.synthesis.template``) when it has one, else they are the whole file.
"""

from __future__ import annotations

import csv
import json
import os
import time
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from ._common import TrainingError, resolve_tasks
from .tokens import DEFAULT_TEMPLATE

CHARSET = "ab+-*%=()012 len[:]"


def _model(n_tasks: int, hidden: int):
    import torch
    from torch import nn

    class CharPolicy(nn.Module):
        def __init__(self):
            super().__init__()
            self.vocab = len(CHARSET) + 2  # + BOS (input only) + EOS (output)
            self.task = nn.Embedding(n_tasks, hidden)
            self.embed = nn.Embedding(self.vocab, hidden)
            self.gru = nn.GRUCell(hidden, hidden)
            self.head = nn.Linear(hidden, len(CHARSET) + 1)  # chars + EOS

        def sample(self, task_index: int, group: int, max_len: int, device) -> tuple[list[str], Any]:
            h = self.task(torch.full((group,), task_index, device=device, dtype=torch.long))
            inp = torch.full((group,), self.vocab - 1, device=device, dtype=torch.long)  # BOS
            alive = torch.ones(group, dtype=torch.bool, device=device)
            logp = torch.zeros(group, device=device)
            chars: list[list[str]] = [[] for _ in range(group)]
            eos = len(CHARSET)
            for _ in range(max_len):
                h = self.gru(self.embed(inp), h)
                dist = torch.distributions.Categorical(logits=self.head(h))
                tok = dist.sample()
                logp = logp + dist.log_prob(tok) * alive
                for i, t in enumerate(tok.tolist()):
                    if alive[i] and t != eos:
                        chars[i].append(CHARSET[t])
                alive = alive & (tok != eos)
                if not alive.any():
                    break
                inp = torch.where(tok == eos, torch.zeros_like(tok), tok)
            return ["".join(c) for c in chars], logp

    return CharPolicy()


def train_text_policy(suite: str | None = "sb3.synth", tasks: Any = None, iterations: int = 20, group: int = 8,
                      max_len: int = 12, lr: float = 3e-3, hidden: int = 64, device: str = "auto", seed: int = 0,
                      out: str | None = None, backend: str = "auto",
                      say: Callable[[str], None] | None = print) -> list[dict[str, Any]]:
    """Run *iterations* rounds over every task; returns (and writes to *out*) one log row per task-round."""
    import torch

    from .train import resolve_device

    if group < 2:
        raise TrainingError(f"group must be >= 2 (the baseline is the group's mean), not {group}")
    specs = resolve_tasks(tasks, suite if tasks is None else None)
    for t in specs:
        if t.single_shot_path is None:
            raise TrainingError(f"{t.source}: task {t.task_id} has no single-shot step; the text trainer sends "
                                "whole completions as single-shot actions")
    dev = torch.device(resolve_device(device, say))
    torch.manual_seed(seed)
    policy = _model(len(specs), hidden).to(dev)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    vecs = [gym.make_vec(t.env_id if t.env_id in gym.registry else "agentenv/Task-v0", num_envs=group,
                         vectorization_mode="sync",
                         **({} if t.env_id in gym.registry else {"task": t.source}), mode="single_shot",
                         backend=backend) for t in specs]
    templates = [(t.metadata.get("synthesis") or {}).get("template") for t in specs]
    log: list[dict[str, Any]] = []
    try:
        for it in range(iterations):
            for ti, (task, envs) in enumerate(zip(specs, vecs)):
                start = time.perf_counter()
                envs.reset(seed=seed + it)
                completions, logp = policy.sample(ti, group, max_len, dev)
                actions = tuple(templates[ti].format(body=c) if templates[ti] else c for c in completions)
                _, rewards, _, _, infos = envs.step(actions)
                r = torch.as_tensor(np.asarray(rewards, dtype=np.float32), device=dev)
                masked = np.asarray(infos.get("reward_masked", np.zeros(group, bool)), dtype=bool)
                keep = torch.as_tensor(~masked, device=dev)  # infrastructure failures are not trained on
                adv = (r - r[keep].mean()) / (r[keep].std() + 1e-6) if keep.sum() > 1 else torch.zeros_like(r)
                loss = -(adv.detach() * logp * keep).sum() / keep.sum().clamp(min=1)
                opt.zero_grad()
                loss.backward()
                opt.step()
                success = np.asarray(infos.get("success", np.zeros(group, bool)), dtype=bool)
                best = int(np.argmax(rewards))
                row = {"iteration": it, "task_id": task.task_id, "reward_mean": float(np.mean(rewards)),
                       "reward_std": float(np.std(rewards)), "reward_max": float(np.max(rewards)),
                       "success_rate": float(success.mean()), "loss": float(loss.item()),
                       "best_completion": completions[best], "masked": int(masked.sum()),
                       "seconds": time.perf_counter() - start}
                log.append(row)
            if say:
                recent = log[-len(specs):]
                say(f"iteration {it + 1}/{iterations}: mean reward {np.mean([x['reward_mean'] for x in recent]):.3f}, "
                    f"success {np.mean([x['success_rate'] for x in recent]):.2f}")
    finally:
        for envs in vecs:
            envs.close()
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "text_policy.csv"), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(log[0]))
            writer.writeheader()
            writer.writerows(log)
        torch.save(policy.state_dict(), os.path.join(out, "text_policy.pt"))
        with open(os.path.join(out, "text_policy.json"), "w") as f:
            json.dump({"tasks": [t.task_id for t in specs], "charset": CHARSET, "hidden": hidden,
                       "max_len": max_len, "default_template": DEFAULT_TEMPLATE}, f, indent=2)
    return log
