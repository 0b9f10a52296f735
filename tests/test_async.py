"""Async environments and batched rollouts: the event loop stays free, N x G episodes run concurrently
under one limit, rewards come back in order, groups share their starting state, failures are masked."""

from __future__ import annotations

import asyncio
import json
import os
import time

import jsonschema
import pytest

import agentenv
from agentenv.wrappers import fence

from _paths import EXAMPLES, REPO

FIZZBUZZ = open(os.path.join(EXAMPLES, "fizzbuzz", "solution", "fizzbuzz.py")).read()
WORD_COUNT = open(os.path.join(EXAMPLES, "word_count", "solution", "wordcount", "core.py")).read()


def tool(name, **arguments):
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def test_async_env_steps_without_blocking_the_event_loop():
    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        clock = asyncio.create_task(ticker())
        async with agentenv.AsyncCodingEnv("examples.fizzbuzz") as env:
            obs, info = await env.reset(seed=0)
            before, start = ticks, time.monotonic()
            obs, reward, terminated, truncated, info = await env.step(FIZZBUZZ)
            during, elapsed = ticks - before, time.monotonic() - start
            with pytest.raises(RuntimeError, match="one call at a time"):
                await asyncio.gather(env.reset(seed=1), env.reset(seed=2))
        clock.cancel()
        return reward, info, during, elapsed

    reward, info, during, elapsed = asyncio.run(main())
    assert reward == 1.0 and info["metrics"]["tests_passed"] == 4
    # A blocked loop would tick at most once while the step runs (it takes a pytest run in a sandbox).
    assert elapsed > 0.05 and during >= 3


def test_async_chat_env_speaks_messages():
    async def main():
        async with agentenv.AsyncCodingEnv("examples.bank_transfer", chat=True, mode="agentic") as env:
            messages, _ = await env.reset(seed=0)
            new, *_ = await env.step(tool("read_file", path="bank/ledger.py"))
            return messages, new, env.tools

    messages, new, tools = asyncio.run(main())
    assert messages[0]["role"] == "system" and new[0]["role"] == "tool" and "def transfer" in new[0]["content"]
    assert {t["function"]["name"] for t in tools} >= {"read_file", "submit"}


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    trajectory = tmp_path_factory.mktemp("pool") / "rollouts.jsonl"
    pool = agentenv.RolloutPool(concurrency=3, trajectory=str(trajectory))
    pool.trajectory_path = trajectory
    yield pool
    pool.close()


def test_score_runs_n_prompts_by_g_samples_concurrently_and_in_order(pool):
    tasks = ["examples.fizzbuzz"] * 3 + ["examples.word_count"] * 3
    completions = [fence(FIZZBUZZ, "python"), "def fizzbuzz(n):\n    return []\n", {"role": "assistant", "content": FIZZBUZZ},
                   "```python\nprint('no')\n```", fence(WORD_COUNT), None]
    results = pool.score_sync(tasks, completions, seed=7)
    assert [r.reward for r in results] == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    assert [r.index for r in results] == list(range(6)) and [r.task_id for r in results] == tasks
    assert all(not r.reward_masked and r.integrity["ok"] and r.runtime["hash"] for r in results)
    assert results[0].metrics["tests_passed"] == 4 and results[0].reward_breakdown
    assert 1 < pool.peak_concurrency <= 3
    with pytest.raises(ValueError, match="no <model_generated_code> step"):
        pool.score_sync("examples.bank_transfer", ["x"])
    with pytest.raises(ValueError, match="2 tasks for 3 completions"):
        pool.score_sync(["examples.fizzbuzz"] * 2, ["a", "b", "c"])


def test_a_group_starts_from_the_same_state_and_a_policy_drives_it(pool):
    seen = []

    async def policy(messages, tools):
        await asyncio.sleep(0)  # an inference server would be awaited here
        if messages[-1]["role"] == "tool" and messages[-1]["tool_call_id"].startswith("prefix_"):
            return tool("read_file", path="notes.txt")
        seen.append(messages[-1]["content"])
        return tool("submit")

    prefix = [{"action": "run_command", "command": "echo shared-state > notes.txt"}]
    results = asyncio.run(pool.rollout(["examples.bank_transfer", "examples.fizzbuzz"], policy, group_size=3,
                                       mode="agentic", prefix=prefix, seed=11))
    assert [(r.group, r.sample) for r in results] == [(g, s) for g in range(2) for s in range(3)]
    assert [r.seed for r in results] == [11, 11, 11, 12, 12, 12]  # a group shares its seed
    assert seen == ["shared-state\n"] * 6  # every sample read what the prefix wrote
    assert all(r.rounds == 2 and r.terminated and r.prompt_messages == 4 for r in results)
    assert results[0].messages[2]["tool_calls"][0]["function"]["name"] == "run_command"


def test_infrastructure_failures_are_retried_then_masked_and_policy_bugs_surface(pool):
    calls = {"n": 0}

    def flaky(messages, tools):  # a sync policy runs on a worker thread
        calls["n"] += 1
        raise agentenv.InfrastructureError("inference server unreachable")

    results = pool.rollout_sync(["examples.fizzbuzz"], flaky, group_size=2)
    assert all(r.reward_masked and r.attempts == 2 and "unreachable" in r.infra_error for r in results)
    assert calls["n"] == 4 and [r.reward for r in results] == [0.0, 0.0]

    def buggy(messages, tools):
        raise ValueError("my policy has a bug")

    with pytest.raises(ValueError, match="my policy has a bug"):  # the rest of the batch is cancelled
        pool.rollout_sync(["examples.fizzbuzz"], buggy, group_size=2)
    # the pool is still usable afterwards
    assert pool.score_sync("examples.fizzbuzz", [FIZZBUZZ])[0].reward == 1.0


def test_pool_trajectories_validate_and_export(pool, tmp_path):
    from agentenv._cli import main

    schema = json.load(open(os.path.join(REPO, "schemas", "trajectory.schema.json")))
    validator = jsonschema.Draft202012Validator(schema)
    records = [json.loads(line) for line in pool.trajectory_path.read_text().splitlines()]
    assert {r["type"] for r in records} == {"reset", "step", "episode"}
    for record in records:
        errors = [e.message for e in validator.iter_errors(record)]
        assert not errors, (record["type"], errors[:3])
    out = tmp_path / "chat.jsonl"
    assert main(["export", str(pool.trajectory_path), "--format", "chat", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    episodes = [r for r in records if r["type"] == "episode"]
    assert len(rows) == sum(not e["reward_masked"] for e in episodes) and all(not r["reward_masked"] for r in rows)
    assert sorted(r["reward"] for r in rows).count(1.0) == sum(e["reward"] == 1.0 for e in episodes)
