"""``agentenv rm train``: fit the readability model on preference pairs with a Bradley-Terry loss.

``loss = -log sigmoid(s(chosen) - s(rejected))`` plus a small penalty on the scores' size (they are
only defined up to a constant otherwise). The best epoch on the validation pairs is kept, then a
Platt calibration ``p = sigmoid(a s + b)`` is fitted on them (chosen labelled 1, rejected 0). The
curves go to ``curve.csv`` (and TensorBoard when it is installed) and ``curve.png``; the checkpoint
records the exact command, the seed and the dataset's sha256, so it can be made again.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import random
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

import torch

from . import __version__
from .dataset import DatasetError, pairs, read_manifest
from .model import ModelConfig, ReadabilityNet, collate, resolve_device, save_checkpoint
from .progress import progress_bar
from .tokens import Encoded, encode


@dataclass
class TrainResult:
    checkpoint: str
    device: str
    val_accuracy: float
    train_pairs: int
    val_pairs: int
    steps: int
    seconds: float
    curve_csv: str
    curve_png: str | None
    tensorboard: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _encode_all(texts: Sequence[str], progress: Callable) -> dict[str, Encoded]:
    out: dict[str, Encoded] = {}
    for text in progress(texts, "encoding"):
        if text not in out:
            encoded = encode(text)
            if encoded is not None:
                out[text] = encoded
    return out


def _batches(n: int, size: int, lengths: Sequence[int], rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar lengths (less padding), in random order."""
    order = list(range(n))
    rng.shuffle(order)
    buckets = [sorted(order[i:i + size * 20], key=lambda k: lengths[k]) for i in range(0, n, size * 20)]
    batches = [b[i:i + size] for b in buckets for i in range(0, len(b), size)]
    rng.shuffle(batches)
    return batches


def pairwise_scores(net: ReadabilityNet, encoded: dict[str, Encoded], data: Sequence[tuple[str, str]], device: str,
                    batch: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """Scores of the chosen and of the rejected side of each pair (eval mode, no gradient)."""
    net.eval()
    chosen, rejected = [], []
    with torch.inference_mode():
        for i in range(0, len(data), batch):
            part = data[i:i + batch]
            s = net(collate([encoded[c] for c, _ in part] + [encoded[r] for _, r in part], device)).float().cpu()
            chosen.append(s[:len(part)])
            rejected.append(s[len(part):])
    return torch.cat(chosen) if chosen else torch.zeros(0), torch.cat(rejected) if rejected else torch.zeros(0)


def calibrate(chosen: torch.Tensor, rejected: torch.Tensor) -> dict[str, float]:
    """Platt scaling: a, b minimising the log loss of sigmoid(a s + b) with chosen = 1, rejected = 0."""
    scores = torch.cat([chosen, rejected]).double()
    labels = torch.cat([torch.ones_like(chosen), torch.zeros_like(rejected)]).double()
    a = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([a, b], lr=0.5, max_iter=200)

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(a * scores + b, labels)
        loss.backward()
        return loss
    opt.step(closure)
    return {"a": float(a.detach()), "b": float(b.detach())}


def train(data_dir: str, out_dir: str, *, epochs: int = 4, batch_size: int = 64, lr: float = 3e-3,
          config: ModelConfig | None = None, max_pairs: int | None = None, max_val_pairs: int = 2000,
          seed: int = 0, device: str = "auto", threads: int | None = None, evals_per_epoch: int = 3,
          command: str | None = None, progress: bool = True, say: Callable[[str], None] = print) -> TrainResult:
    started = time.monotonic()
    manifest = read_manifest(data_dir)
    device = resolve_device(device)
    why = "CUDA is available" if device.startswith("cuda") else (
        "torch sees no CUDA device" if not torch.cuda.is_available() else "asked for")
    if threads:
        torch.set_num_threads(threads)
    say(f"device: {device} ({why}); torch {torch.__version__}, {torch.get_num_threads()} CPU threads")
    random.seed(seed)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    bar = progress_bar(progress)

    train_pairs = [(c, r) for _, _, c, r in pairs(data_dir, "train")]
    val_pairs = [(c, r) for _, _, c, r in pairs(data_dir, "val")]
    if not train_pairs or not val_pairs:
        raise DatasetError(f"{data_dir}: the dataset has {len(train_pairs)} training and {len(val_pairs)} validation "
                           "pairs; build it from more packages (agentenv rm dataset)")
    rng.shuffle(train_pairs)
    rng.shuffle(val_pairs)
    if max_pairs:
        train_pairs = train_pairs[:max_pairs]
    val_pairs = val_pairs[:max_val_pairs]
    encoded = _encode_all([t for p in train_pairs + val_pairs for t in p], bar)
    # pairs the representation cannot tell apart (only comments removed) carry no signal
    def distinct(pair: tuple[str, str]) -> bool:
        return pair[0] in encoded and pair[1] in encoded and encoded[pair[0]] != encoded[pair[1]]
    train_pairs = [p for p in train_pairs if distinct(p)]
    val_pairs = [p for p in val_pairs if distinct(p)]
    say(f"{len(train_pairs)} training pairs, {len(val_pairs)} validation pairs")

    config = config or ModelConfig()
    net = ReadabilityNet(config).to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=0.01)
    lengths = [len(encoded[c]) + len(encoded[r]) for c, r in train_pairs]
    per_epoch = math.ceil(len(train_pairs) / batch_size)
    total = per_epoch * epochs
    warmup = max(1, total // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / warmup)
                                              * 0.5 * (1 + math.cos(math.pi * min(1.0, step / total))))
    os.makedirs(out_dir, exist_ok=True)
    curve_csv = os.path.join(out_dir, "curve.csv")
    writer = _tensorboard(out_dir, say)
    rows: list[dict[str, float]] = []
    best = (-1.0, None)
    step, run_loss, run_acc = 0, 0.0, 0.0
    eval_every = max(1, per_epoch // max(1, evals_per_epoch))
    with open(curve_csv, "w", newline="") as f:
        log = csv.DictWriter(f, ["step", "epoch", "train_loss", "train_accuracy", "val_loss", "val_accuracy", "lr",
                                 "seconds"])
        log.writeheader()
        pbar = bar(None, "training", total=total)
        for epoch in range(epochs):
            for batch in _batches(len(train_pairs), batch_size, lengths, rng):
                net.train()
                part = [train_pairs[i] for i in batch]
                s = net(collate([encoded[c] for c, _ in part] + [encoded[r] for _, r in part], device))
                diff = s[:len(part)] - s[len(part):]
                loss = torch.nn.functional.softplus(-diff).mean() + 1e-3 * (s ** 2).mean()
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                opt.step()
                sched.step()
                step += 1
                value = loss.item()
                run_loss = 0.98 * run_loss + 0.02 * value if step > 1 else value
                acc = (diff > 0).float().mean().item()
                run_acc = 0.98 * run_acc + 0.02 * acc if step > 1 else acc
                pbar.update(1)
                pbar.set_postfix(loss=f"{run_loss:.3f}", acc=f"{run_acc:.3f}")
                if step % eval_every == 0 or step == total:
                    chosen, rejected = pairwise_scores(net, encoded, val_pairs, device)
                    val_loss = float(torch.nn.functional.softplus(-(chosen - rejected)).mean())
                    margin = chosen - rejected
                    val_acc = float((margin > 0).float().mean() + 0.5 * (margin == 0).float().mean())
                    row = {"step": step, "epoch": round(step / per_epoch, 3), "train_loss": round(run_loss, 5),
                           "train_accuracy": round(run_acc, 5), "val_loss": round(val_loss, 5),
                           "val_accuracy": round(val_acc, 5), "lr": sched.get_last_lr()[0],
                           "seconds": round(time.monotonic() - started, 1)}
                    rows.append(row)
                    log.writerow(row)
                    f.flush()
                    if writer is not None:
                        for key in ("train_loss", "train_accuracy", "val_loss", "val_accuracy", "lr"):
                            writer.add_scalar(key, row[key], step)
                    if val_acc > best[0]:
                        best = (val_acc, {k: v.detach().clone() for k, v in net.state_dict().items()})
        pbar.close()
    if writer is not None:
        writer.close()
    net.load_state_dict(best[1])
    chosen, rejected = pairwise_scores(net, encoded, val_pairs, device)
    calibration = calibrate(chosen, rejected)
    seconds = time.monotonic() - started
    meta = {"agentenv_rm": __version__, "command": command or " ".join(sys.argv), "seed": seed,
            "dataset_sha256": manifest["sha256"], "dataset_command": manifest.get("command"),
            "dataset_counts": manifest["counts"], "train_pairs": len(train_pairs),
            "val_pairs": len(val_pairs), "val_accuracy": round(best[0], 5), "epochs": epochs, "batch_size": batch_size,
            "lr": lr, "device": device, "torch": str(torch.__version__), "threads": torch.get_num_threads(),
            "python": platform.python_version(), "seconds": round(seconds, 1)}
    path = os.path.join(out_dir, "readability.pt")
    net.cpu()
    save_checkpoint(path, net, calibration, meta)
    with open(os.path.join(out_dir, "readability.json"), "w") as f:
        json.dump({**meta, "calibration": calibration, "config": asdict(config)}, f, indent=1)
        f.write("\n")
    png = _plot(rows, os.path.join(out_dir, "curve.png"), say)
    say(f"best validation accuracy {best[0]:.3f}; checkpoint {path} ({os.path.getsize(path) // 1024} KiB); "
        f"{seconds:.0f} s")
    return TrainResult(path, device, best[0], len(train_pairs), len(val_pairs), step, round(seconds, 1), curve_csv, png,
                       os.path.join(out_dir, "tensorboard") if writer is not None else None)


def _tensorboard(out_dir: str, say: Callable[[str], None]):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        say("TensorBoard is not installed: the curve goes to curve.csv and curve.png only "
            "(pip install tensorboard for live curves)")
        return None
    return SummaryWriter(os.path.join(out_dir, "tensorboard"))


def _plot(rows: list[dict[str, float]], path: str, say: Callable[[str], None]) -> str | None:
    if not rows:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say("matplotlib is not installed: no curve.png")
        return None
    steps = [r["step"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    left.plot(steps, [r["train_loss"] for r in rows], label="train (running)")
    left.plot(steps, [r["val_loss"] for r in rows], label="validation")
    left.set_xlabel("step")
    left.set_ylabel("Bradley-Terry loss")
    left.legend()
    right.plot(steps, [r["train_accuracy"] for r in rows], label="train (running)")
    right.plot(steps, [r["val_accuracy"] for r in rows], label="validation")
    right.set_xlabel("step")
    right.set_ylabel("pairwise accuracy")
    right.set_ylim(0.45, 1.0)
    right.legend()
    fig.suptitle("agentenv rm train: readability model")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
