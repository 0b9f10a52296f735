"""A tiny causal language model built on the spot: a byte-level BPE tokenizer trained here and a
Qwen2-architecture transformer from a config with random weights. Nothing is downloaded.

It exists so that every adapter can be tested for real (a real tokenizer, a real chat template with
tools, a real ``generate``) on a machine with no GPU and no model hub. Its outputs are noise; with
``teach`` it is first fitted for a few seconds to a handful of target replies (e.g. a tool call),
so that multi-turn tests see tool calls reach a sandbox. The same code paths take a real model by
name (``Qwen/Qwen2.5-0.5B-Instruct`` on a GPU machine): the tiny one only stands in for it.
"""

from __future__ import annotations

import glob
import json
import os
import random
import sysconfig
from typing import Any, Iterable, Sequence

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>",
                  "<tool_response>", "</tool_response>", "<think>", "</think>"]


def _corpus(limit_bytes: int = 200_000) -> list[str]:
    """Text to train the tokenizer on: the bundled example tasks and some of Python's own library
    (files on disk only: suites whose sources are fetched on first use are left alone)."""
    import agentenv

    texts: list[str] = []
    for path in agentenv.find_suite("examples").task_files:
        try:
            task = agentenv.load_task(path)
            texts.append(task.description)
            texts += [d.decode("utf-8", "replace") for d in task.workspace.read().values()]
        except agentenv.AgentEnvError:
            continue
    stdlib = sysconfig.get_paths()["stdlib"]
    for path in sorted(glob.glob(os.path.join(stdlib, "*.py")))[:40]:
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.append(f.read())
        if sum(map(len, texts)) > limit_bytes:
            break
    texts.append(json.dumps(agentenv.tools()))
    texts += ['<tool_call>\n{"name": "run_command", "arguments": {"command": "python -m pytest -q"}}\n</tool_call>',
              "<|im_start|>system\n", "<|im_start|>user\n", "<|im_start|>assistant\n", "<|im_end|>\n"]
    return texts


def chat_template() -> str:
    """Qwen2.5's chat template (tools included), as TRL ships it: TRL then recognises it and
    parses tool calls out of generations by itself."""
    from trl.chat_template_utils import qwen2_5_chat_template

    return qwen2_5_chat_template


def build_tokenizer(vocab_size: int = 2048, texts: Iterable[str] | None = None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    core.train_from_iterator(list(texts if texts is not None else _corpus()), trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        additional_special_tokens=SPECIAL_TOKENS[1:])
    tokenizer.chat_template = chat_template()
    tokenizer.padding_side = "left"
    return tokenizer


def build_model(tokenizer, *, hidden: int = 64, layers: int = 2, heads: int = 4, seed: int = 0,
                max_positions: int = 8192):
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 2,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                         max_position_embeddings=max_positions, tie_word_embeddings=True, bos_token_id=pad,
                         eos_token_id=eos, pad_token_id=pad)
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=[eos, pad], pad_token_id=pad, do_sample=True,
                                               temperature=1.0, max_new_tokens=64)
    return model


def teach(model, tokenizer, examples: Sequence[tuple[list[dict[str, Any]], list[dict[str, Any]] | None, str]],
          steps: int = 40, lr: float = 1e-2, seed: int = 0) -> float:
    """Fit *model* to reply *completion* after each ``(messages, tools, completion)`` (loss on the
    completion and its end-of-turn token only); returns the last loss."""
    import torch

    rng = random.Random(seed)
    batches = []
    for messages, tools, completion in examples:
        prompt = tokenizer.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True, tokenize=False)
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        target_ids = tokenizer(completion + "<|im_end|>", add_special_tokens=False)["input_ids"]
        ids = torch.tensor([prompt_ids + target_ids])
        labels = torch.tensor([[-100] * len(prompt_ids) + target_ids])
        batches.append((ids, labels))
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    loss = torch.tensor(0.0)
    for _ in range(steps):
        ids, labels = rng.choice(batches)
        loss = model(input_ids=ids, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    return float(loss.detach())


def build_tiny(out_dir: str, *, vocab_size: int = 2048, hidden: int = 64, layers: int = 2, seed: int = 0,
               examples: Sequence[tuple[list[dict[str, Any]], list[dict[str, Any]] | None, str]] = (),
               steps: int = 40) -> str:
    """Build (and with *examples*, fit) the tiny model; save model and tokenizer to *out_dir*."""
    tokenizer = build_tokenizer(vocab_size)
    model = build_model(tokenizer, hidden=hidden, layers=layers, seed=seed)
    if examples:
        teach(model, tokenizer, examples, steps=steps, seed=seed)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def tool_call_text(name: str, arguments: dict[str, Any]) -> str:
    """A tool call as Qwen-style models write it."""
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'
