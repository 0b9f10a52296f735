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


def build_tokenizer(vocab_size: int = 4096, texts: Iterable[str] | None = None):
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
                max_positions: int = 32768, window: int = 24):
    """A Qwen2 model whose every layer attends to the last *window* tokens only (sliding-window
    attention, rotary positions): what it writes depends on the last ``layers * window`` tokens, at
    any position. So fitting it to a reply takes short sequences, and what it learnt holds inside
    long real prompts."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 2,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                         max_position_embeddings=max_positions, tie_word_embeddings=True, bos_token_id=pad,
                         use_sliding_window=True, sliding_window=window, max_window_layers=0,
                         eos_token_id=eos, pad_token_id=pad)
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=[eos, pad], pad_token_id=pad, do_sample=True,
                                               temperature=1.0, max_new_tokens=64)
    return model


def teach(model, tokenizer, examples: Sequence[tuple[list[dict[str, Any]], list[dict[str, Any]] | None, str]],
          steps: int = 300, lr: float = 3e-3, seed: int = 0) -> float:
    """Fit *model* to reply *completion* after each ``(messages, tools, completion)`` (loss on the
    completion and its end-of-turn token only; every example in every step); returns the last loss.

    Only the prompt's last ``2 * layers * window`` tokens are kept: no position of the reply can see
    further back through the sliding windows, so the fit is the same as on the whole prompt."""
    import torch

    torch.manual_seed(seed)
    config = model.config
    # what a reply token can see through the windows, with room to spare (implementations count the
    # window's edges differently; keeping more context than can matter is always exact)
    reach = 2 * (config.sliding_window or 10 ** 9) * config.num_hidden_layers + 8
    rows = []
    for messages, tools, completion in examples:
        prompt = tokenizer.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True, tokenize=False)
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"][-reach:]
        target_ids = tokenizer(completion + "<|im_end|>", add_special_tokens=False)["input_ids"]
        rows.append((prompt_ids + target_ids, [-100] * len(prompt_ids) + target_ids))
    # one sequence at a time, unpadded: padding masks and sliding windows need not agree on anything
    batches = [(torch.tensor([ids]), torch.tensor([labels])) for ids, labels in rows]
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    loss = torch.tensor(0.0)
    for _ in range(steps):
        loss = sum(model(input_ids=ids, labels=labels).loss for ids, labels in batches) / len(batches)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    return float(loss.detach())


def build_tiny(out_dir: str, *, vocab_size: int = 4096, hidden: int = 64, layers: int = 2, seed: int = 0,
               examples: Sequence[tuple[list[dict[str, Any]], list[dict[str, Any]] | None, str]] = (),
               steps: int = 300) -> str:
    """Build (and with *examples*, fit) the tiny model; save model and tokenizer to *out_dir*.

    The tokenizer is loaded back with ``AutoTokenizer`` (next to the model's config) before
    fitting, so the model learns the token ids that every later user (a trainer, the server) gets."""
    from transformers import AutoTokenizer

    os.makedirs(out_dir, exist_ok=True)
    build_tokenizer(vocab_size).save_pretrained(out_dir)
    model = build_model(AutoTokenizer.from_pretrained(out_dir), hidden=hidden, layers=layers, seed=seed)
    # With the model's config.json beside it, AutoTokenizer loads the tokenizer as the model type's
    # class (Qwen2's pre-tokenizer splits digits apart): fit the model to the ids that every later
    # user gets, not to those of the file alone.
    model.save_pretrained(out_dir)
    tokenizer = AutoTokenizer.from_pretrained(out_dir)
    if examples:
        loss = teach(model, tokenizer, examples, steps=steps, seed=seed)
        with open(os.path.join(out_dir, "agentenv_fit.json"), "w") as f:
            json.dump({"examples": len(examples), "steps": steps, "final_loss": loss}, f)
    model.save_pretrained(out_dir)
    return out_dir


def tool_call_text(name: str, arguments: dict[str, Any]) -> str:
    """A tool call as Qwen-style models write it."""
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


TOOL_USE_TASK = "examples.bank_transfer"
TEST_COMMAND = "python -m pytest -q -p no:cacheprovider tests"


def tool_use_examples(task_ref: str = TOOL_USE_TASK) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]], str]]:
    """Replies that make the tiny model act like a (very simple) agent on *task_ref*: run the tests,
    then submit; with the tools rendered both as agentenv gives them and as TRL renders its
    environment's methods."""
    import agentenv
    from agentenv.wrappers import SYSTEM_AGENTIC, agentic_prompt

    from .trl import tool_schemas

    task = agentenv.resolve_task(task_ref)
    first = [{"role": "system", "content": SYSTEM_AGENTIC}, {"role": "user", "content": agentic_prompt(task, task.max_rounds)}]
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "run_command", "arguments": {"command": TEST_COMMAND}}}]}
    second = first + [call, {"role": "tool", "name": "run_command", "content": "$ pytest\n[exit code 1]\n..FF. 3 failed"}]
    examples = []
    for tools in (agentenv.tools(task), tool_schemas()):
        examples.append((first, tools, tool_call_text("run_command", {"command": TEST_COMMAND})))
        examples.append((second, tools, tool_call_text("submit", {})))
    return examples


#: the rubric the tiny judge was fitted to answer (tests use it)
JUDGE_CRITERIA = [{"name": "readability", "description": "names say what they hold", "weight": 3},
                  {"name": "docs", "description": "public functions have docstrings", "weight": 1}]
JUDGE_REPLY = '{"readability": 8, "docs": 4}'


def judge_examples() -> list[tuple[list[dict[str, Any]], None, str]]:
    """The ``rubric`` judge's prompt for :data:`JUDGE_CRITERIA`, answered with :data:`JUDGE_REPLY`."""
    import agentenv

    task = agentenv.resolve_task("examples.fizzbuzz")
    view = agentenv.EpisodeView(task, {"fizzbuzz.py": b"def fizzbuzz(n):\n    return []\n"}, {}, ())
    judge = agentenv.registry().reward_models["rubric"]
    messages = judge.prompt(view, {"criteria": JUDGE_CRITERIA, "endpoint": "http://judge/v1", "model": "tiny"})
    return [(messages, None, JUDGE_REPLY)]


def cached_tiny(kind: str = "tool-use", steps: int = 300) -> str:
    """The tiny model, built once per machine and kept under the agentenv cache (``AGENTENV_CACHE``):
    ``"random"`` (random weights) or ``"tool-use"`` (fitted to :func:`tool_use_examples` and
    :func:`judge_examples`)."""
    import hashlib

    import transformers

    examples = tool_use_examples() + judge_examples() if kind == "tool-use" else []
    with open(__file__, "rb") as f:
        source = f.read()
    key = hashlib.sha256(source + json.dumps([kind, steps, transformers.__version__, examples], default=str).encode())
    root = os.environ.get("AGENTENV_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "agentenv")
    out = os.path.join(root, "tiny-models", f"{kind}-{key.hexdigest()[:16]}")
    if os.path.isfile(os.path.join(out, "config.json")):
        return out
    tmp = f"{out}.{os.getpid()}.part"
    build_tiny(tmp, examples=examples, steps=steps)
    try:
        os.replace(tmp, out)
    except OSError:  # another process finished first: keep theirs
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return out
