"""The readability model: a small convolutional network over the tokens of :mod:`agentenv_rm.tokens`,
and its checkpoint format.

Each token is the sum of embeddings of its kind, its spacing, its column bucket and its block depth;
an identifier adds what a character-level convolution makes of its name (so ``total_price`` and
``x1`` look different on packages never seen in training). Residual dilated convolutions (by
default three of width 5, dilations 1, 2, 4: 29 tokens, about three lines, around each token) read
the sequence; masked mean and max pooling make one vector, whatever the length, and a small head
gives a scalar. Trained pairwise (Bradley-Terry), only score
differences mean something; a Platt calibration fitted on held-out pairs maps a score to [0, 1]: the
probability that the code is as a careful author wrote it rather than a degraded version.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

import torch
from torch import nn

import agentenv

from .tokens import (CHARS, COLUMN_BUCKETS, DEPTH_BUCKETS, FINGERPRINT, MAX_IDENT_CHARS, REPRESENTATION, VOCAB,
                     Encoded, ident_chars)

CHECKPOINT_FORMAT = "agentenv-rm-checkpoint/1"
ARCHITECTURE = "conv-1"


class CheckpointError(agentenv.AgentEnvError):
    """A checkpoint that cannot be used: missing, not ours, or made for another representation."""


@dataclass(frozen=True)
class ModelConfig:
    dim: int = 32
    layers: int = 3
    kernel: int = 5
    char_dim: int = 16
    dropout: float = 0.0


class _Block(nn.Module):
    def __init__(self, dim: int, kernel: int, dilation: int, dropout: float):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.conv = nn.Conv1d(dim, dim, kernel, dilation=dilation, padding=dilation * (kernel - 1) // 2)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = nn.functional.gelu(self.norm(x)) * mask
        return x + self.drop(self.conv(h.transpose(1, 2)).transpose(1, 2))


class ReadabilityNet(nn.Module):
    def __init__(self, config: ModelConfig = ModelConfig()):
        super().__init__()
        d = config.dim
        self.config = config
        self.kind = nn.Embedding(len(VOCAB), d, padding_idx=0)
        self.space = nn.Embedding(2, d)
        self.column = nn.Embedding(COLUMN_BUCKETS, d)
        self.depth = nn.Embedding(DEPTH_BUCKETS, d)
        self.char = nn.Embedding(CHARS, config.char_dim, padding_idx=0)
        self.char_conv = nn.Conv1d(config.char_dim, d, 3, padding=1)
        self.name_length = nn.Embedding(MAX_IDENT_CHARS + 1, d)
        self.blocks = nn.ModuleList(_Block(d, config.kernel, 2 ** i, config.dropout) for i in range(config.layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Sequential(nn.Linear(2 * d, d), nn.GELU(), nn.Linear(d, 1))

    def forward(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        mask = batch["mask"].unsqueeze(-1)
        x = self.kind(batch["kinds"]) + self.space(batch["spaces"]) + self.column(batch["columns"]) \
            + self.depth(batch["depths"])
        chars = batch["chars"]  # [names + 1, MAX_IDENT_CHARS], row 0 is "no name"
        if chars.shape[0] > 1:
            c = self.char(chars).transpose(1, 2)
            names = torch.relu(self.char_conv(c)).max(dim=2).values + self.name_length((chars > 0).sum(1))
            names = torch.cat([torch.zeros_like(names[:1]), names[1:]])
            x = x + names[batch["names"]]
        x = x * mask
        for block in self.blocks:
            x = block(x, mask)
        x = self.norm(x) * mask
        count = mask.sum(1).clamp(min=1)
        mean = x.sum(1) / count
        top = x.masked_fill(mask == 0, -1e4).max(1).values
        return self.head(torch.cat([mean, top], dim=1)).squeeze(-1)


def collate(items: Sequence[Encoded], device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """Pad a batch; identifiers are looked up once per distinct name."""
    length = max(1, max(len(e) for e in items))
    size = (len(items), length)
    kinds = torch.zeros(size, dtype=torch.long)
    spaces, columns, depths, names = (torch.zeros(size, dtype=torch.long) for _ in range(4))
    mask = torch.zeros(size, dtype=torch.float32)
    table: dict[str, int] = {}
    for row, e in enumerate(items):
        n = len(e)
        if not n:
            continue
        kinds[row, :n] = torch.tensor(e.kinds)
        spaces[row, :n] = torch.tensor(e.spaces)
        columns[row, :n] = torch.tensor(e.columns)
        depths[row, :n] = torch.tensor(e.depths)
        names[row, :n] = torch.tensor([0 if name is None else table.setdefault(name, len(table) + 1)
                                       for name in e.names])
        mask[row, :n] = 1.0
    chars = torch.zeros((len(table) + 1, MAX_IDENT_CHARS), dtype=torch.long)
    for name, index in table.items():
        ids = ident_chars(name)
        chars[index, :len(ids)] = torch.tensor(ids)
    batch = {"kinds": kinds, "spaces": spaces, "columns": columns, "depths": depths, "names": names, "mask": mask,
             "chars": chars}
    return {k: v.to(device) for k, v in batch.items()}


def resolve_device(device: str) -> str:
    """``auto``: CUDA when torch sees a device, else the CPU."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise agentenv.AgentEnvError(f"--device {device}: torch sees no CUDA device here; use --device cpu or auto")
    return device


# --------------------------------------------------------------------------- checkpoints

def save_checkpoint(path: str, net: ReadabilityNet, calibration: Mapping[str, float], meta: Mapping[str, Any]) -> None:
    state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
    doc = {"format": CHECKPOINT_FORMAT, "architecture": ARCHITECTURE,
           "representation": {"name": REPRESENTATION, "fingerprint": FINGERPRINT},
           "config": asdict(net.config), "calibration": dict(calibration), "meta": dict(meta), "state_dict": state}
    tmp = f"{path}.tmp"
    torch.save(doc, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: str) -> tuple[ReadabilityNet, dict[str, float], dict[str, Any]]:
    """The network (in eval mode), its calibration and metadata; :class:`CheckpointError` with the
    fix for anything else. Loaded with ``weights_only``: a checkpoint named by a task document is
    untrusted, and a pickle could run code."""
    if not os.path.isfile(path):
        raise CheckpointError(f"readability checkpoint {path!r} does not exist; train one with `agentenv rm train` "
                              "or leave options.checkpoint out to use the bundled one")
    try:
        doc = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds for a file that is not a checkpoint
        raise CheckpointError(f"{path} is not an agentenv-rm checkpoint "
                              f"({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != CHECKPOINT_FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise CheckpointError(f"{path} is not an agentenv-rm checkpoint (format {found!r}, expected "
                              f"{CHECKPOINT_FORMAT!r})")
    rep = doc.get("representation") or {}
    if rep.get("fingerprint") != FINGERPRINT or rep.get("name") != REPRESENTATION:
        raise CheckpointError(
            f"{path} was trained on another code representation ({rep.get('name')!r}, vocabulary "
            f"{rep.get('fingerprint')!r}); this agentenv-rm reads {REPRESENTATION!r} (vocabulary {FINGERPRINT}). "
            "Scores from it would be meaningless: retrain it with `agentenv rm train`, or install the "
            f"agentenv-rm version that wrote it ({(doc.get('meta') or {}).get('agentenv_rm', 'unknown')})")
    if doc.get("architecture") != ARCHITECTURE:
        raise CheckpointError(f"{path} holds a {doc.get('architecture')!r} network; this agentenv-rm runs "
                              f"{ARCHITECTURE!r}: retrain it with `agentenv rm train`")
    try:
        net = ReadabilityNet(ModelConfig(**doc["config"]))
        net.load_state_dict(doc["state_dict"])
        calibration = {"a": float(doc["calibration"]["a"]), "b": float(doc["calibration"]["b"])}
    except (KeyError, TypeError, RuntimeError, ValueError) as exc:
        raise CheckpointError(f"{path}: the weights do not fit the network they claim ({str(exc)[:200]}); "
                              "retrain it with `agentenv rm train`") from None
    net.eval()
    return net, calibration, dict(doc.get("meta") or {})
