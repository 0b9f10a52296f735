"""`agentenv rm dataset | train | eval | score` end to end on a few standard-library packages, with a
tiny network (the bundled checkpoint is trained once with the command it records), and the
checkpoint format's refusals."""

from __future__ import annotations

import gzip
import inspect
import json
import os
import pickle
import random
import shlex
import subprocess
import sys
import textwrap

import pytest
import torch

from agentenv_rm import behaviour, dataset, transforms
from agentenv_rm.evaluate import evaluate
from agentenv_rm.model import CheckpointError, ModelConfig, load_checkpoint
from agentenv_rm.train import train

AGENTENV = os.path.join(os.path.dirname(sys.executable), "agentenv")
# chosen so that every split gets a package (the split is a hash of the name)
PACKAGES = {"train": ["textwrap", "heapq", "statistics", "getopt", "fnmatch"], "val": ["base64", "reprlib"],
            "test": ["shlex", "glob", "queue"]}
TINY = ModelConfig(dim=16, layers=2, char_dim=8)


def _cli(*args, timeout=600):
    return subprocess.run([AGENTENV, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("rm") / "data"
    names = ",".join(n for group in PACKAGES.values() for n in group)
    proc = _cli("rm", "dataset", "--out", str(out), "--no-site", "--packages", names, "--per-package", "30",
                "--check-sample", "12", "--no-progress")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return str(out)


@pytest.fixture(scope="module")
def model(data, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("rm") / "model")
    lines = []
    result = train(data, out, epochs=1, batch_size=32, config=TINY, max_pairs=400, max_val_pairs=200, seed=3,
                   device="auto", threads=1, progress=False, say=lines.append)
    return result, lines


def test_the_dataset_is_split_by_package_and_shares_no_code_across_splits(data):
    manifest = dataset.read_manifest(data)
    records = list(dataset.read_records(data))
    splits = {}
    for r in records:
        splits.setdefault(r.package, set()).add(r.split)
        assert r.split == dataset.split_of(r.package)
    assert all(len(s) == 1 for s in splits.values())
    assert {s for group in splits.values() for s in group} == {"train", "val", "test"}
    keys = [transforms.dump(transforms.without_docstrings(transforms.parse_function(r.original)[0])) for r in records]
    assert len(keys) == len(set(keys))  # no function twice, so none in two splits
    assert manifest["counts"]["test"]["pairs"] == sum(len(r.variants) for r in records if r.split == "test")
    assert {s["package"] for s in manifest["sources"]} == set(splits)
    assert manifest["sha256"] and manifest["command"].startswith("agentenv rm dataset")
    check = manifest["behaviour_check"]
    assert check["functions"] >= 8 and check["informative"] >= 4 and check["mismatches"] == []


def test_the_behaviour_check_catches_a_variant_that_behaves_differently():
    original = textwrap.dedent(inspect.getsource(shlex.quote))
    good = transforms.collapse(original, random.Random(0))
    bad = original.replace("return s\n", "return s + ' '\n")
    record = dataset.Record("quote", "shlex", "stdlib", "shlex.py", "quote", "test", original,
                            {"collapse": good, "rename": bad})
    report = behaviour.check([record], sample=1)
    assert (report.functions, report.informative) == (1, 1)
    assert report.mismatches == [{"function": "shlex.quote", "kinds": ["rename"]}]


def test_train_picks_the_device_logs_curves_and_writes_a_checkpoint(data, model):
    result, lines = model
    assert result.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert any(line.startswith(f"device: {result.device}") for line in lines)
    with open(result.curve_csv) as f:
        header, *rows = f.read().splitlines()
    assert header.startswith("step,epoch,train_loss") and len(rows) >= 2
    assert os.path.getsize(result.curve_png) > 5000 and os.listdir(result.tensorboard)
    _, calibration, meta = load_checkpoint(result.checkpoint)
    assert meta["seed"] == 3 and meta["dataset_sha256"] == dataset.read_manifest(data)["sha256"]
    assert calibration["a"] != 0 and 0.0 <= result.val_accuracy <= 1.0


def test_training_is_reproducible_from_its_seed(data, model, tmp_path):
    first = model[0].checkpoint
    again = train(data, str(tmp_path), epochs=1, batch_size=32, config=TINY, max_pairs=400, max_val_pairs=200, seed=3,
                  device="cpu", threads=1, progress=False, say=lambda line: None)
    a, b = torch.load(first, weights_only=True), torch.load(again.checkpoint, weights_only=True)
    assert all(torch.equal(a["state_dict"][k], b["state_dict"][k]) for k in a["state_dict"])


def test_eval_compares_with_every_baseline_and_measures_stability_and_attacks(data, model, tmp_path):
    report = evaluate(data, model[0].checkpoint, max_pairs=150, out_dir=str(tmp_path), attack_sample=15,
                      say=lambda line: None)
    methods = report["accuracy"]
    assert len(methods) == 6 and all(0.0 <= m["overall"] <= 1.0 for m in methods.values())
    assert any(name.startswith("reference_similarity") for name in methods)
    assert report["stability"]["rename_one_local_to_another_word"]["n"] >= 1
    assert set(report["attacks"]) >= {"comment_flood", "prompt_injection", "docstring_stuffing", "name_injection"}
    assert (tmp_path / "report.md").read_text().startswith("Pairwise accuracy on")
    assert json.loads((tmp_path / "report.json").read_text())["pairs"] == report["pairs"]
    assert os.path.getsize(tmp_path / "accuracy.png") > 5000


def test_score_cli_prints_a_score_per_file(model, tmp_path):
    good = tmp_path / "good.py"
    good.write_text("def mean(values):\n    return sum(values) / len(values)\n")
    proc = _cli("rm", "score", str(good), "--checkpoint", model[0].checkpoint)
    assert proc.returncode == 0, proc.stderr
    score = float(proc.stdout.split()[0])
    assert 0.0 <= score <= 1.0 and str(good) in proc.stdout


# ------------------------------------------------------------------ checkpoints that are refused

def test_a_checkpoint_for_another_representation_is_refused_with_the_fix(model, tmp_path):
    doc = torch.load(model[0].checkpoint, weights_only=True)
    doc["representation"] = {"name": "agentenv-rm/tokens-0", "fingerprint": "0123456789abcdef"}
    old = tmp_path / "old.pt"
    torch.save(doc, old)
    with pytest.raises(CheckpointError, match=r"another code representation.*retrain it with `agentenv rm train`"):
        load_checkpoint(str(old))
    doc = torch.load(model[0].checkpoint, weights_only=True)
    doc["state_dict"] = {k: v[..., :1] for k, v in doc["state_dict"].items()}
    torch.save(doc, tmp_path / "bent.pt")
    with pytest.raises(CheckpointError, match="do not fit the network"):
        load_checkpoint(str(tmp_path / "bent.pt"))


class _Payload:
    def __reduce__(self):
        return (os.system, (f"touch {_Payload.marker}",))


def test_a_checkpoint_is_never_unpickled_with_code(tmp_path):
    _Payload.marker = str(tmp_path / "pwned")
    with open(tmp_path / "evil.pt", "wb") as f:
        pickle.dump({"format": "agentenv-rm-checkpoint/1", "x": _Payload()}, f)
    with pytest.raises(CheckpointError, match="not an agentenv-rm checkpoint"):
        load_checkpoint(str(tmp_path / "evil.pt"))
    assert not os.path.exists(_Payload.marker)
    (tmp_path / "text.pt").write_text("hello")
    with pytest.raises(CheckpointError, match="not an agentenv-rm checkpoint"):
        load_checkpoint(str(tmp_path / "text.pt"))
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(str(tmp_path / "missing.pt"))


def test_a_dataset_from_elsewhere_is_refused(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "something/9"}))
    with pytest.raises(dataset.DatasetError, match="rebuild it"):
        list(dataset.read_records(str(tmp_path)))
    with gzip.open(tmp_path / "functions.jsonl.gz", "wt") as f:
        f.write("{}\n")
    (tmp_path / "manifest.json").write_text(json.dumps({"format": dataset.DATASET_FORMAT}))
    with pytest.raises(dataset.DatasetError, match=r"functions.jsonl.gz:1: not a dataset record"):
        list(dataset.read_records(str(tmp_path)))
