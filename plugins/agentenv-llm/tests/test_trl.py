"""TRL's GRPOTrainer on CPU with the tiny model: every reward comes from a task's tests in a sandbox."""

from __future__ import annotations

import statistics

import pytest
import torch

import agentenv
from agentenv_llm import grpo_example
from agentenv_llm.tiny import TEST_COMMAND
from agentenv_llm.trl import SandboxReward, environment_factory, make_dataset

from _llm_paths import SCRATCH_TASK


def test_two_grpo_steps_train_on_rewards_from_sandboxes(tiny_model, tmp_path):
    from transformers import AutoModelForCausalLM

    run = grpo_example.main(["--model", tiny_model, "--tasks", SCRATCH_TASK, "--steps", "2", "--generations", "4",
                             "--out", str(tmp_path)])
    batches = run["reward"].history
    assert [len(b) for b in batches] == [4, 4]
    for batch in batches:
        # each completion was written to answer.py and judged by the task's 6 tests in a sandbox
        assert all(r.metrics["tests_total"] == 6 and not r.reward_masked and r.runtime["hash"] for r in batch)
        assert all(r.reward == pytest.approx(r.metrics["tests_passed"] / 6) for r in batch)
    logged = [e for e in run["trainer"].state.log_history if "rewards/agentenv/mean" in e]
    assert len(logged) == 2
    for entry, batch in zip(logged, batches):  # what TRL trained on is what the sandboxes said
        assert float(entry["rewards/agentenv/mean"]) == pytest.approx(statistics.mean(r.reward for r in batch), abs=1e-3)
    before = AutoModelForCausalLM.from_pretrained(tiny_model).state_dict()
    after = run["trainer"].model.state_dict()
    moved = any(not torch.equal(before[k], after[k].cpu()) for k in before)
    varied = any(len({r.reward for r in batch}) > 1 for batch in batches)
    assert moved == varied  # GRPO updates exactly when a group's rewards differ
    assert varied, [[r.reward for r in b] for b in batches]


def test_the_reward_function_names_a_missing_task_column():
    reward = SandboxReward()
    with pytest.raises(KeyError, match="no 'task' column"):
        reward(["p"], ["c"], other=[1])
    reward.close()


def test_trl_multi_turn_environment_drives_an_agentic_episode(tiny_model, tmp_path):
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    factory = environment_factory()
    config = GRPOConfig(output_dir=str(tmp_path), max_steps=1, num_generations=2, per_device_train_batch_size=2,
                        max_completion_length=1536, max_tool_calling_iterations=3, temperature=0.2,
                        learning_rate=1e-4, logging_steps=1, report_to="none", save_strategy="no", seed=0,
                        use_cpu=True, bf16=False)
    trainer = GRPOTrainer(model=tiny_model, processing_class=AutoTokenizer.from_pretrained(tiny_model),
                          environment_factory=factory, args=config,
                          train_dataset=make_dataset(["examples.bank_transfer"], mode="agentic", repeat=2))
    tool_names = {t.__name__ for t in trainer.tools}
    assert tool_names == set(agentenv.registry().actions)  # every action is a tool TRL renders
    trainer.train()
    episodes = [e for env in factory.instances for e in env._episodes]
    assert episodes, "no rollout reset an environment"
    # the fitted tiny model ran the tests in the sandbox, then submitted
    assert any(calls[:2] == [{"action": "run_command", "command": TEST_COMMAND}, {"action": "submit"}]
               for calls in episodes), episodes
    logged = [e for e in trainer.state.log_history if "rewards/AgentenvEnvironment/mean" in e]
    assert logged and float(logged[0]["rewards/AgentenvEnvironment/mean"]) == 0.0  # unsolved: the real score
    factory.close()
