"""agentenv-ray on a real local multi-node Ray cluster (ray.cluster_utils.Cluster, one CPU a node):
real sandboxed episodes give the results of the local executor, task data and runtimes are
prepared once per node, a worker process or a whole node killed mid-run loses no episode and
duplicates none, a rerun resumes from the result log, and SB3's PPO trains on a RayVectorEnv.
One cluster for the module, shut down at its end even when a test fails."""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

import agentenv  # noqa: E402
from agentenv import EpisodeWork, Scheduler, SchedulerConfig, ThreadExecutor, rollout_job  # noqa: E402
from agentenv_ray import RayExecutor, RayVectorEnv, ResultLog, prepared_on  # noqa: E402

# Ray workers import what a pickled function names; this module's helpers travel by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

# A removed node is noticed within ~10 s; a raylet slowed by a loaded machine is not declared dead.
HEALTH = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 1000,
          "health_check_failure_threshold": 10}


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "_system_config": HEALTH})
    try:
        c.add_node(num_cpus=1)
        c.add_node(num_cpus=1)
        c.wait_for_nodes()
        ray.init(address=c.address, log_to_driver=False)
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture(scope="module")
def tasks():
    examples = {t.task_id: t for t in agentenv.find_suite("examples").load()}
    return [examples["examples.fizzbuzz"], examples["examples.word_count"]]


def _mode(task):
    return "single_shot" if task.single_shot_path else "agentic"


def test_cluster_results_equal_local_ones_and_each_node_prepares_once(cluster, tasks, tmp_path):
    jobs = [rollout_job(t, s, _mode(t), seed=s) for t in tasks for s in range(2)]
    work = EpisodeWork("reference", backend="namespace")
    with ThreadExecutor(work, workers=2) as local:
        expected = [o.value.summary() for o in Scheduler(local, SchedulerConfig()).run(jobs).outcomes]
    caches = tmp_path / "nodes"
    with RayExecutor(work, node_cache_root=str(caches)) as executor:
        assert executor.slots == 3 and len(executor.nodes()) == 3  # one slot per core, on every node
        executor.prepare(tasks)
        report = Scheduler(executor, SchedulerConfig()).run(jobs)
    assert [o.status for o in report.outcomes] == ["ok"] * len(jobs), [o.error for o in report.outcomes]
    assert [o.value.summary() for o in report.outcomes] == expected
    assert all(o.value.episode.success for o in report.outcomes)
    # every node that ran an episode unpacked each task folder and runtime it used exactly once
    prepared = {node.name: prepared_on(str(node)) for node in caches.iterdir()}
    used = [lines for lines in prepared.values() if lines]
    assert len(used) >= 2, prepared
    for lines in used:
        assert len(lines) == len(set(lines)) and any(line.startswith("runtime ") for line in lines), lines


class SlowReference(agentenv.Agent):
    """The reference solution after a pause, so that episodes are running when a fault strikes.
    Seed 100, on its first try off the node *doomed* (the one the test removes), kills its own worker
    process (a crash mid-episode). Every act that goes on then leaves a marker naming its node, so the
    test can remove the node of a running episode: two faults, each retried, wherever Ray placed the
    slots (the crash and the removal never strike the same attempt)."""

    def __init__(self, task, mode, markers, doomed):
        self.inner = agentenv.make_agent("reference", task, mode)
        self.markers, self.doomed = markers, doomed

    def reset(self, task, mode, seed=None):
        self.seed = seed
        self.inner.reset(task, mode, seed)

    def act(self, observation, info):
        node = ray.get_runtime_context().get_node_id()
        crash = os.path.join(self.markers, "crashed")
        if self.seed == 100 and node != self.doomed and not os.path.exists(crash):
            open(crash, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        with open(os.path.join(self.markers, f"{node}-{self.seed}-{os.getpid()}"), "w"):
            pass
        time.sleep(2.0)
        return self.inner.act(observation, info)


def test_killed_worker_and_killed_node_lose_and_duplicate_nothing_and_a_rerun_resumes(cluster, tasks, tmp_path):
    extra = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    markers = tmp_path / "markers"
    markers.mkdir()
    fizzbuzz = tasks[0]
    jobs = [rollout_job(fizzbuzz, s, "single_shot", seed=100 + s) for s in range(8)]
    work = EpisodeWork(functools.partial(SlowReference, markers=str(markers), doomed=extra.node_id),
                       backend="namespace")
    log_path = str(tmp_path / "results.jsonl")
    killed = threading.Event()

    def kill_the_extra_node_when_it_runs_an_episode():
        node_id = extra.node_id
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not any(p.name.startswith(node_id) for p in markers.iterdir()):
            time.sleep(0.1)
        cluster.remove_node(extra, allow_graceful=False)
        killed.set()

    # half a CPU per slot: the slot of the killed node can restart on a surviving one
    with RayExecutor(work, workers=4, cpus_per_worker=0.5) as executor:
        assert extra.node_id in executor.nodes()
        killer = threading.Thread(target=kill_the_extra_node_when_it_runs_an_episode, daemon=True)
        killer.start()
        try:
            with ResultLog(log_path) as log:
                report = log.run(Scheduler(executor, SchedulerConfig(retries=3)), jobs[:6])
        finally:
            killer.join(timeout=300)
            # the next test must not place work on the removed node before Ray has noticed it is gone
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and any(n["NodeID"] == extra.node_id and n["Alive"]
                                                      for n in ray.nodes()):
                time.sleep(0.5)
        assert killed.is_set()
        assert [o.status for o in report.outcomes] == ["ok"] * 6, [o.error for o in report.outcomes]
        assert sorted(o.key for o in report.outcomes) == sorted(j.key for j in jobs[:6])
        assert report.counters["retries"] >= 2  # the crashed process and the lost node were both retried
        assert all(o.value.episode.success for o in report.outcomes)
        # a rerun of all 8 jobs runs only the 2 that have no result yet
        with ResultLog(log_path) as log:
            assert len(log.pending(jobs)) == 2
            again = log.run(Scheduler(executor, SchedulerConfig()), jobs)
        assert sorted(o.key for o in again.outcomes) == [(fizzbuzz.task_id, 6), (fizzbuzz.task_id, 7)]
    with open(log_path) as f:
        keys = [tuple(json.loads(line)["key"]) for line in f]
    assert sorted(keys) == sorted(j.key for j in jobs)  # each episode once: none lost, none twice


def test_sb3_ppo_trains_on_a_ray_vector_env_spread_over_nodes(cluster, tmp_path):
    sb3 = pytest.importorskip("stable_baselines3")
    from agentenv_sb3 import EditChoiceEnv
    from stable_baselines3.common.logger import configure

    from agentenv_ray import SB3VecEnv

    make = functools.partial(EditChoiceEnv, tasks=["agentenv/sb3.repair.mean-v0"], rounds=1)
    venv = RayVectorEnv([make, make], cpus_per_env=0.5)
    try:
        assert len({node for node, _ in venv.placement}) == 2  # the sub-environments live on two nodes
        obs, info = venv.reset(seed=0)
        assert obs.shape == (2,) + venv.single_observation_space.shape
        obs, rewards, terminated, truncated, infos = venv.step(venv.action_space.sample())
        assert (terminated | truncated).all() and "final_obs" in infos  # rounds=1: every step ends an episode
        vec = SB3VecEnv(venv)
        first = vec.reset()
        _, sb3_rewards, dones, sb3_infos = vec.step(np.array([0, 1]))
        assert dones.all() and all(i["terminal_observation"].shape == first.shape[1:] for i in sb3_infos)
        model = sb3.PPO("MlpPolicy", vec, n_steps=64, batch_size=64, n_epochs=2, seed=0, device="cpu")
        model.set_logger(configure(str(tmp_path), []))  # (SB3's default makes a folder in /tmp that nothing removes)
        model.learn(total_timesteps=256)
        assert model.num_timesteps >= 256
        action, _ = model.predict(obs, deterministic=True)
        assert venv.action_space.contains(action.astype(venv.action_space.dtype))
    finally:
        venv.close()
