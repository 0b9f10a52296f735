"""A Gymnasium ``VectorEnv`` whose sub-environments live on Ray actors spread over the cluster.

``RayVectorEnv(env_fns)`` builds each ``env_fn()`` inside its own actor (``SPREAD`` over the nodes,
``cpus_per_env`` each), so its sandboxes are created on that actor's node. A step sends every
sub-environment its action at once and waits for all. Sub-environments reset themselves when an
episode ends (Gymnasium's same-step autoreset: ``infos["final_obs"]`` / ``infos["final_info"]``
hold the last observation and info of the finished episode), which is what SB3 expects; the SB3
adapter is :class:`agentenv_ray.SB3VecEnv`. Moving a training script from one machine to a
cluster is then one argument: ``RayVectorEnv([fn] * n)`` where it had ``SyncVectorEnv([fn] * n)``.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
import ray
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

import agentenv


class VectorEnvError(agentenv.AgentEnvError):
    """The sub-environments cannot form one vector environment (different spaces, no env_fns)."""


class EnvActor:
    """One sub-environment and the node it lives on."""

    def __init__(self, env_fn: Callable[[], gym.Env]):
        self.env = env_fn()
        self.node_id = ray.get_runtime_context().get_node_id()

    def describe(self) -> tuple[Any, Any, str, int]:
        return self.env.observation_space, self.env.action_space, self.node_id, os.getpid()

    def reset(self, seed: int | None, options: dict | None) -> tuple[Any, dict]:
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:  # same-step autoreset: report the last episode's end in the info
            final_obs, final_info = obs, info
            obs, info = self.env.reset()
            info = {**info, "final_obs": final_obs, "final_info": final_info}
        return obs, float(reward), bool(terminated), bool(truncated), info

    def get(self, name: str) -> Any:
        return getattr(self.env, name)

    def set(self, name: str, value: Any) -> None:
        setattr(self.env, name, value)

    def call(self, name: str, args: tuple, kwargs: dict) -> Any:
        return getattr(self.env, name)(*args, **kwargs)

    def close(self) -> None:
        self.env.close()


class RayVectorEnv(gym.vector.VectorEnv):
    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], cpus_per_env: float = 1.0,
                 ready_timeout_s: float = 300.0):
        if not env_fns:
            raise VectorEnvError("RayVectorEnv needs at least one env_fn")
        if not ray.is_initialized():
            ray.init(log_to_driver=False)
        actor = ray.remote(EnvActor).options(num_cpus=cpus_per_env, scheduling_strategy="SPREAD", max_restarts=0)
        self.actors = [actor.remote(fn) for fn in env_fns]
        described = ray.get([a.describe.remote() for a in self.actors], timeout=ready_timeout_s)
        self.num_envs = len(self.actors)
        self.single_observation_space, self.single_action_space = described[0][0], described[0][1]
        for i, (obs_space, act_space, _, _) in enumerate(described):
            if obs_space != self.single_observation_space or act_space != self.single_action_space:
                raise VectorEnvError(f"sub-environment {i} has spaces {obs_space}, {act_space}; sub-environment "
                                     f"0 has {self.single_observation_space}, {self.single_action_space}")
        #: the node and process of each sub-environment
        self.placement = [(node, pid) for _, _, node, pid in described]
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._obs = create_empty_array(self.single_observation_space, n=self.num_envs, fn=np.zeros)
        self.closed = False

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        seeds = seed if isinstance(seed, (list, tuple)) else (
            [None] * self.num_envs if seed is None else [seed + i for i in range(self.num_envs)])
        if len(seeds) != self.num_envs:
            raise VectorEnvError(f"reset got {len(seeds)} seeds for {self.num_envs} sub-environments")
        results = ray.get([a.reset.remote(s, options) for a, s in zip(self.actors, seeds)])
        infos: dict[str, Any] = {}
        for i, (_, info) in enumerate(results):
            infos = self._add_info(infos, info, i)
        self._obs = concatenate(self.single_observation_space, [obs for obs, _ in results], self._obs)
        return self._obs.copy(), infos

    def step_each(self, actions: Any) -> list[tuple[Any, float, bool, bool, dict]]:
        """Each sub-environment's own step result (what adapters that want per-env infos read)."""
        return ray.get([a.step.remote(act) for a, act in zip(self.actors, iterate(self.action_space, actions))])

    def step(self, actions: Any):
        results = self.step_each(actions)
        infos: dict[str, Any] = {}
        for i, result in enumerate(results):
            infos = self._add_info(infos, result[4], i)
        self._obs = concatenate(self.single_observation_space, [r[0] for r in results], self._obs)
        return (self._obs.copy(), np.array([r[1] for r in results], dtype=np.float64),
                np.array([r[2] for r in results], dtype=np.bool_), np.array([r[3] for r in results], dtype=np.bool_),
                infos)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return tuple(ray.get([a.get.remote(name) for a in self.actors]))

    def set_attr(self, name: str, values: Any) -> None:
        values = values if isinstance(values, (list, tuple)) else [values] * self.num_envs
        ray.get([a.set.remote(name, v) for a, v in zip(self.actors, values)])

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return tuple(ray.get([a.call.remote(name, args, kwargs) for a in self.actors]))

    def close_extras(self, **kwargs: Any) -> None:
        try:
            ray.get([a.close.remote() for a in self.actors], timeout=60)
        finally:
            for a in self.actors:
                ray.kill(a, no_restart=True)
