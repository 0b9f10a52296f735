"""SB3's VecEnv interface over a :class:`RayVectorEnv` (stable-baselines3 has no adapter for
Gymnasium's vector API): ``PPO("MlpPolicy", SB3VecEnv(RayVectorEnv(fns)))`` trains on the cluster."""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from ._vector import RayVectorEnv


class SB3VecEnv(VecEnv):
    def __init__(self, venv: RayVectorEnv):
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: Any = None

    def reset(self) -> np.ndarray:
        options = self._options[0] if all(o == self._options[0] for o in self._options) else None
        obs, _ = self.venv.reset(seed=list(self._seeds), options=options or None)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        results = self.venv.step_each(self._actions)
        obs = np.stack([np.asarray(r[0]) for r in results])
        rewards = np.array([r[1] for r in results], dtype=np.float32)
        dones = np.array([r[2] or r[3] for r in results], dtype=bool)
        infos = []
        for obs_i, reward, terminated, truncated, info in results:
            info = dict(info)
            if terminated or truncated:  # SB3's names for what Gymnasium calls final_obs / truncation
                info["terminal_observation"] = info.pop("final_obs")
                info["TimeLimit.truncated"] = truncated and not terminated
            infos.append(info)
        return obs, rewards, dones, infos

    def close(self) -> None:
        self.venv.close()

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        return [indices] if isinstance(indices, int) else list(indices)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        values = self.venv.get_attr(attr_name)
        return [values[i] for i in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        import ray

        ray.get([self.venv.actors[i].set.remote(attr_name, value) for i in self._indices(indices)])

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        import ray

        return ray.get([self.venv.actors[i].call.remote(method_name, method_args, method_kwargs)
                        for i in self._indices(indices)])

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._indices(indices)]  # the sub-environments are used as built
