"""The scheduler on real sandboxed episodes: the results do not depend on the number of workers or
on the lanes, a straggler is cut at its deadline with its sandbox killed mid-command, and an
over-provisioned run cancels its surplus without leaving a sandbox behind."""

from __future__ import annotations

import time

import pytest

import agentenv
from agentenv import Deadlines, EpisodeWork, Lane, Scheduler, SchedulerConfig, ThreadExecutor, rollout_job


def _mode(task) -> str:
    return "single_shot" if task.single_shot_path else "agentic"


@pytest.fixture(scope="module")
def examples():
    return agentenv.find_suite("examples").load()


class RecordingBackend(agentenv.SandboxBackend):
    """The real namespace backend, remembering every sandbox it opened (to prove none survives)."""

    name = "namespace"

    def __init__(self):
        self.inner = agentenv.get_backend("namespace")
        self.boxes = []

    @classmethod
    def availability(cls):
        return agentenv.Availability(True)

    def open(self, request):
        box = self.inner.open(request)
        self.boxes.append(box)
        return box


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(line.startswith("State:") and "Z" in line for line in f)
    except (FileNotFoundError, ProcessLookupError):  # (ESRCH: it was reaped between the open and the read)
        return True


def _all_gone(pids, timeout: float = 20.0) -> bool:
    """The zygote reaps a closed sandbox asynchronously: give it a moment on a loaded machine."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if all(_gone(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def test_results_do_not_depend_on_workers_or_lanes(examples):
    # an agentic task, a shell-runtime task and a single-shot one, each with its own duration guess
    chosen = [t for t in examples if t.task_id in ("examples.bank_transfer", "examples.disk_report",
                                                    "examples.fizzbuzz")]
    jobs = [rollout_job(t, s, _mode(t), seed=1000 + s) for t in chosen for s in range(1)]
    results = {}
    for name, workers, config in (
            ("1 worker, FIFO", 1, SchedulerConfig.fifo()),
            ("3 workers, 3 lanes", 3, SchedulerConfig(lanes=(Lane("short", 1.5, min_workers=1), Lane("mid", 5.0),
                                                              Lane("long"))))):
        by_agent = {}
        for agent in ("reference", "noop"):
            with ThreadExecutor(EpisodeWork(agent, backend="namespace"), workers=workers) as executor:
                report = Scheduler(executor, config).run(jobs)
            assert [o.status for o in report.outcomes] == ["ok"] * len(jobs), [o.error for o in report.outcomes]
            by_agent[agent] = [o.value.summary() for o in report.outcomes]
            assert all(o.predicted_s > 0 and o.lane for o in report.outcomes)
        results[name] = by_agent
    first, second = results.values()
    assert first == second
    assert [r["success"] for r in first["reference"]] == [True] * len(jobs)
    assert [r["score"] for r in first["noop"]] == [0.0] * len(jobs)


class SleepyOnSeedZero(agentenv.Agent):
    """Seed 0: starts a command that outlives every deadline of these tests. Other seeds: the
    reference solution."""

    def __init__(self, task, mode):
        self.reference = agentenv.make_agent("reference", task, mode)

    def reset(self, task, mode, seed=None):
        self.sleepy, self.sent = seed == 0, False
        self.reference.reset(task, mode, seed)

    def act(self, observation, info):
        if not self.sleepy:
            return self.reference.act(observation, info)
        if not self.sent:
            self.sent = True
            return {"action": "run_command", "command": "sleep 25; echo woke"}
        return {"action": "submit"}


def test_a_straggler_is_cut_mid_command_and_its_sandbox_killed(examples):
    task = next(t for t in examples if t.task_id == "examples.bank_transfer")
    backend = RecordingBackend()
    quick = Deadlines(start_s=60, agent_s=2.0, scoring_s=60)
    jobs = [rollout_job(task, 0, "agentic", 0, deadlines=quick), rollout_job(task, 1, "agentic", 1, deadlines=quick)]
    with ThreadExecutor(EpisodeWork(SleepyOnSeedZero, backend=backend), workers=1) as executor:
        report = Scheduler(executor, SchedulerConfig(cancel_grace_s=20)).run(jobs)
        cut, fine = report.outcomes
        assert cut.status == "timeout" and cut.phase == "agent" and "agent deadline" in cut.error
        assert cut.duration_s < 20  # cut at its deadline, not at the end of the 25 s command
        assert report.counters.get("abandoned", 0) == 0  # the work returned once its sandbox was killed
        assert fine.status == "ok" and fine.value.episode.success
    assert backend.boxes and all(not box.alive for box in backend.boxes)
    assert _all_gone([box.init_pid for box in backend.boxes])


def test_over_provisioning_cancels_the_surplus_without_leaking_a_sandbox(examples):
    task = next(t for t in examples if t.task_id == "examples.bank_transfer")
    backend = RecordingBackend()

    # group 0: a slow rollout; groups 1 and 2: quick ones. Two groups are needed.
    jobs = [rollout_job(task, 0, "agentic", 0, group=0), rollout_job(task, 1, "agentic", 1, group=1),
            rollout_job(task, 2, "agentic", 2, group=2)]
    config = SchedulerConfig(purpose="train", lanes=(Lane("all"),))
    with ThreadExecutor(EpisodeWork(SleepyOnSeedZero, backend=backend), workers=2) as executor:
        report = Scheduler(executor, config).run(jobs, need_groups=2)
    assert set(report.overprovision.selected) == {1, 2} and report.overprovision.dropped == (0,)
    slow = report.outcomes[0]
    assert slow.status == "cancelled" and slow.selected is False and slow.masked
    assert all(o.status == "ok" and o.selected for o in report.outcomes[1:])
    assert all(not box.alive for box in backend.boxes)
    assert _all_gone([box.init_pid for box in backend.boxes])
