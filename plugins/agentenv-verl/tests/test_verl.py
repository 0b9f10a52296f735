"""verl's own reward managers and agent-loop interface driving agentenv, up to where verl needs a GPU.

What runs here is verl's code: its loader of custom reward functions, its ``naive`` and ``batch``
reward managers on a ``DataProto``, and ``AgentLoopBase`` with its Continuous Token builder. Only
the rollout server (vLLM/SGLang on GPUs, behind Ray) is replaced, by the tiny model generating on CPU
behind the same ``generate(request_id, prompt_ids, sampling_params) -> TokenOutput`` interface.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
import torch

import agentenv
from agentenv.wrappers import fence

verl = pytest.importorskip("verl", reason="verl is not installed (pip install -e plugins/agentenv-verl)")

from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.trainer.ppo.reward import get_custom_reward_fn  # noqa: E402
from verl.workers.reward_manager.batch import BatchRewardManager  # noqa: E402
from verl.workers.reward_manager.naive import NaiveRewardManager  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from agentenv_verl import data, reward  # noqa: E402

FIZZ = agentenv.resolve_task("examples.fizzbuzz")
SOLUTION = FIZZ.reference_code()


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from agentenv_llm.tiny import cached_tiny

    return AutoTokenizer.from_pretrained(cached_tiny("tool-use"))


def batch(tokenizer, responses, tasks):
    """A DataProto as verl's rollout hands it to the reward manager (left-padded prompts, right-padded responses)."""
    prompts = [tokenizer("<|im_start|>user\nfix it<|im_end|>\n", add_special_tokens=False)["input_ids"]] * len(responses)
    outs = [tokenizer(r, add_special_tokens=False)["input_ids"] for r in responses]
    plen, rlen, pad = max(map(len, prompts)), max(map(len, outs)), tokenizer.pad_token_id
    p = torch.tensor([[pad] * (plen - len(x)) + x for x in prompts])
    r = torch.tensor([x + [pad] * (rlen - len(x)) for x in outs])
    mask = torch.tensor([[0] * (plen - len(a)) + [1] * len(a) + [1] * len(b) + [0] * (rlen - len(b))
                         for a, b in zip(prompts, outs)])
    return DataProto.from_dict(
        tensors={"prompts": p, "responses": r, "attention_mask": mask, "input_ids": torch.cat([p, r], 1)},
        non_tensors={"data_source": np.array(["agentenv"] * len(tasks), dtype=object),
                     "reward_model": np.array([{"ground_truth": t} for t in tasks], dtype=object),
                     "extra_info": np.array([{"task": t} for t in tasks], dtype=object)}), [len(o) for o in outs]


def test_verl_loads_compute_score_and_its_reward_managers_score_in_sandboxes(tokenizer):
    config = OmegaConf.create({"reward": {"custom_reward_function": {"path": reward.__file__, "name": "compute_score"}}})
    compute_score = get_custom_reward_fn(config)
    responses = [fence(SOLUTION, "python"), "```python\ndef fizzbuzz(n):\n    return []\n```"]
    proto, lengths = batch(tokenizer, responses, ["examples.fizzbuzz"] * 2)
    out = NaiveRewardManager(tokenizer, num_examine=0, compute_score=compute_score)(proto, return_dict=True)
    tensor = out["reward_tensor"]
    assert tensor[0, lengths[0] - 1] == 1.0 and tensor[1, lengths[1] - 1] == 0.0 and tensor.sum() == 1.0
    passed = out["reward_extra_info"]["tests_passed"]
    assert passed[0] == 4.0 and passed[1] < 4.0  # counted by the task's pytest run in a sandbox
    assert out["reward_extra_info"]["reward_masked"] == [0.0, 0.0]
    config.reward.custom_reward_function.name = "compute_score_batch"
    manager = BatchRewardManager(tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config))
    proto, lengths = batch(tokenizer, responses * 2, ["examples.fizzbuzz"] * 4)
    assert manager(proto)[:, :].sum(1).tolist() == [1.0, 0.0, 1.0, 0.0]


def test_compute_score_async_scores_concurrently():
    async def main():
        return await asyncio.gather(*[reward.compute_score_async("agentenv", fence(code), "examples.fizzbuzz")
                                      for code in (SOLUTION, "x = 1\n", SOLUTION)])
    assert [r["score"] for r in asyncio.run(main())] == [1.0, 0.0, 1.0]


def test_dataset_rows_name_their_task(tmp_path):
    import pandas as pd

    path = data.write_parquet(["examples.fizzbuzz", "examples.bank_transfer"], str(tmp_path / "train.parquet"))
    frame = pd.read_parquet(path)
    assert list(frame["reward_model"].map(lambda r: r["ground_truth"])) == ["agentenv/examples.fizzbuzz-v0",
                                                                             "agentenv/examples.bank_transfer-v0"]
    agentic = pd.DataFrame(data.rows(["examples.bank_transfer"], mode="agentic"))
    assert agentic["agent_name"][0] == "agentenv" and agentic["prompt"][0][0]["role"] == "system"


class TinyServerManager:
    """verl's server-manager interface, backed by the tiny model generating on CPU."""

    def __init__(self, path):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model = AutoModelForCausalLM.from_pretrained(path).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.calls = 0

    async def generate(self, request_id, prompt_ids, sampling_params, **kwargs):
        self.calls += 1
        ids = torch.tensor([prompt_ids])
        with torch.no_grad():
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=48,
                                      do_sample=False)
        new = out[0][ids.shape[1]:].tolist()
        return TokenOutput(token_ids=new, log_probs=[0.0] * len(new), stop_reason="completed")


def test_the_agentenv_agent_loop_plays_an_episode_through_verls_interface(tokenizer):
    from agentenv_llm.tiny import TEST_COMMAND, cached_tiny
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap

    from agentenv_verl.agent_loop import AgentenvAgentLoop

    config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"prompt_length": 4096, "response_length": 2048}},
                               "data": {"apply_chat_template_kwargs": {}}})
    server = TinyServerManager(cached_tiny("tool-use"))
    row = data.rows(["examples.bank_transfer"], mode="agentic")[0]

    async def main():  # verl's worker builds each agent loop inside its running event loop
        loop = AgentenvAgentLoop(trainer_config=DictConfigWrap(config), server_manager=server, tokenizer=tokenizer,
                                 processor=None, dataset_cls=None, data_config=DictConfigWrap(config.data),
                                 hf_model_type="qwen2")
        return await loop.run({"temperature": 0.0}, **row)
    output = asyncio.run(main())
    assert server.calls == 2  # run the tests, then submit
    assert output.reward_score == 0.0 and not output.extra_fields["reward_masked"]  # unsolved: the real score
    assert output.extra_fields["rounds"] == 2
    text = tokenizer.decode(output.response_ids)
    assert TEST_COMMAND in text and "[exit code 1]" in text  # the sandbox's pytest output is in the context
    mask = output.response_mask
    assert len(mask) == len(output.response_ids) and 0 in mask and mask[0] == 1 and mask[-1] == 1
    generated = tokenizer.decode([t for t, m in zip(output.response_ids, mask) if m])
    assert "[exit code" not in generated  # tool output is masked out of the loss
