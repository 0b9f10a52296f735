"""GRPO on agentenv tasks with TRL; every reward comes from the task's tests run in a sandbox.

    python -m agentenv_llm.grpo_example                               # the tiny model, CPU, 2 steps
    python -m agentenv_llm.grpo_example --model Qwen/Qwen2.5-Coder-1.5B-Instruct --steps 200 \\
        --tasks examples.fizzbuzz,examples.word_count --generations 8 --completion-length 512

Only ``--model`` changes between the two: on a GPU machine TRL puts the model on the GPU by itself.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import Any


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny", help="a model name or directory; 'tiny' builds one here")
    parser.add_argument("--tasks", default="examples.fizzbuzz", help="comma-separated task ids, env ids or files")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--generations", type=int, default=4, help="G: completions per prompt")
    parser.add_argument("--completion-length", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=None, help="sandboxes scoring at once")
    parser.add_argument("--out", default=None, help="output folder (default: a temporary one)")
    args = parser.parse_args(argv)

    import torch
    from trl import GRPOConfig, GRPOTrainer

    from .trl import SandboxReward, make_dataset

    out = args.out or tempfile.mkdtemp(prefix="agentenv-grpo-")
    model, tokenizer = args.model, None
    if args.model == "tiny":
        from transformers import AutoTokenizer

        from .tiny import build_tiny

        model = build_tiny(os.path.join(out, "tiny-model"))
        tokenizer = AutoTokenizer.from_pretrained(model)
    reward = SandboxReward(concurrency=args.concurrency)
    dataset = make_dataset(args.tasks.split(","), repeat=args.steps)
    config = GRPOConfig(output_dir=out, max_steps=args.steps, num_generations=args.generations,
                        per_device_train_batch_size=args.generations, max_completion_length=args.completion_length,
                        learning_rate=1e-4, logging_steps=1, report_to="none", save_strategy="no", seed=0,
                        use_cpu=not torch.cuda.is_available(), bf16=torch.cuda.is_available())
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=config, train_dataset=dataset,
                          processing_class=tokenizer)
    trainer.train()
    reward.close()
    rewards = [[r.reward for r in batch] for batch in reward.history]
    for step, batch in enumerate(reward.history, 1):
        print(f"[grpo] step {step}: rewards {[round(r.reward, 3) for r in batch]} "
              f"(tests run in sandboxes: {sum(int(r.metrics.get('tests_total', 0)) for r in batch)})")
    return {"trainer": trainer, "reward": reward, "rewards": rewards, "out": out}


if __name__ == "__main__":
    main()
