"""``agentenv rm dataset | train | eval | score``."""

from __future__ import annotations

import json
import os
import shlex
import sys

DEFAULT_DATA = os.path.join("runs", "rm", "data")
DEFAULT_MODEL = os.path.join("runs", "rm", "model")


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def configure(p) -> None:
    sub = p.add_subparsers(dest="rm_command", metavar="STEP")
    d = sub.add_parser("dataset", help="preference pairs from the standard library and installed packages")
    d.add_argument("--out", default=DEFAULT_DATA, help=f"output folder (default {DEFAULT_DATA})")
    d.add_argument("--source", action="append", default=[], metavar="DIR",
                   help="also read the packages in DIR (a site-packages-like folder); repeatable")
    d.add_argument("--no-stdlib", action="store_true", help="leave the standard library out")
    d.add_argument("--no-site", action="store_true", help="leave the installed packages out")
    d.add_argument("--packages", default=None, help="only these packages (comma-separated names)")
    d.add_argument("--per-package", type=int, default=100, help="functions kept per package at most (default 100)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--check-sample", type=int, default=200,
                   help="standard-library functions run in a sandbox to check the degraded versions behave the same "
                        "(default 200; 0 skips)")
    d.add_argument("--backend", default="auto", help="sandbox backend for the behaviour check")
    d.add_argument("--no-progress", action="store_true")

    c = sub.add_parser("check", help="run a dataset's degraded functions next to their originals in a sandbox "
                       "(again, or with a larger sample) and record the result in its manifest")
    c.add_argument("--data", default=DEFAULT_DATA)
    c.add_argument("--sample", type=int, default=200)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--backend", default="auto")

    t = sub.add_parser("train", help="train the model on a dataset (pairwise Bradley-Terry loss)")
    t.add_argument("--data", default=DEFAULT_DATA)
    t.add_argument("--out", default=DEFAULT_MODEL)
    t.add_argument("--epochs", type=int, default=4)
    t.add_argument("--batch-size", type=int, default=64)
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--dim", type=int, default=32, help="width of the network (default 32)")
    t.add_argument("--layers", type=int, default=3, help="convolution layers (default 3)")
    t.add_argument("--max-pairs", type=int, default=None, help="train on this many pairs at most")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda[:N]")
    t.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: torch's choice)")
    t.add_argument("--no-progress", action="store_true")
    t.add_argument("--json", action="store_true", help="print the result as JSON on stdout")

    e = sub.add_parser("eval", help="pairwise accuracy on held-out packages, against the baselines; stability; attacks")
    e.add_argument("--data", default=DEFAULT_DATA)
    e.add_argument("--checkpoint", default=None, help="default: the bundled checkpoint")
    e.add_argument("--split", default="test", choices=("train", "val", "test"))
    e.add_argument("--max-pairs", type=int, default=None, help="evaluate on this many pairs at most")
    e.add_argument("--out", default=None, help="write report.json, report.md and accuracy.png here")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--attack-sample", type=int, default=300, help="degraded functions attacked (default 300)")
    e.add_argument("--stability-sample", type=int, default=1000,
                   help="functions renamed to other proper words for the stability measure (default 1000)")
    e.add_argument("--json", action="store_true", help="print the report as JSON on stdout")

    s = sub.add_parser("score", help="score Python files with a checkpoint")
    s.add_argument("files", nargs="+")
    s.add_argument("--checkpoint", default=None)
    s.add_argument("--aggregate", default="min", choices=("min", "mean"))


def run(args) -> int:
    step = getattr(args, "rm_command", None)
    if step is None:
        _say("agentenv rm: name a step: dataset, train, eval or score (agentenv rm STEP --help)")
        return 2
    return {"dataset": _dataset, "check": _check, "train": _train, "eval": _eval, "score": _score}[step](args)


def _command() -> str:
    return "agentenv " + " ".join(shlex.quote(a) for a in sys.argv[1:])


def _dataset(args) -> int:
    from . import dataset
    from .progress import progress_bar

    packages = [] if args.no_stdlib else dataset.stdlib_packages()
    if not args.no_site:
        packages += dataset.site_packages()
    for folder in args.source:
        if not os.path.isdir(folder):
            raise dataset.DatasetError(f"--source {folder}: not a folder")
        packages += dataset.packages_in(folder, "extra", lambda name: "", frozenset())
    if args.packages:
        wanted = set(args.packages.split(","))
        packages = [p for p in packages if p.name in wanted]
    bar = progress_bar(not args.no_progress)
    manifest = dataset.build(packages, args.out, seed=args.seed, per_package=args.per_package,
                             progress=lambda it: bar(list(it), "packages"), say=_say)
    manifest["command"] = _command()
    dataset.write_manifest(args.out, manifest)
    print(json.dumps({"out": args.out, "counts": manifest["counts"], "sha256": manifest["sha256"]}, indent=1))
    return _behaviour(args.out, args.check_sample, args.seed, args.backend) if args.check_sample else 0


def _check(args) -> int:
    return _behaviour(args.data, args.sample, args.seed, args.backend)


def _behaviour(data_dir: str, sample: int, seed: int, backend: str) -> int:
    """Run the behaviour check, record it in the manifest; exit status 1 when a version differs."""
    from . import behaviour, dataset

    manifest = dataset.read_manifest(data_dir)
    _say(f"running up to {sample} standard-library functions and their degraded versions in a sandbox")
    report = behaviour.check(dataset.read_records(data_dir), sample=sample, seed=seed, backend=backend)
    manifest["behaviour_check"] = {**report.to_json(), "sample": sample, "seed": seed}
    dataset.write_manifest(data_dir, manifest)
    _say(f"behaviour check: {report.informative} informative functions ({report.variants} degraded versions, "
         f"{report.calls} calls): {len(report.mismatches)} differ"
         + (f": {report.mismatches[:3]}" if report.mismatches else ""))
    return 1 if report.mismatches else 0


def _train(args) -> int:
    from .model import ModelConfig
    from .train import train

    result = train(args.data, args.out, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                   config=ModelConfig(dim=args.dim, layers=args.layers), max_pairs=args.max_pairs, seed=args.seed,
                   device=args.device, threads=args.threads, command=_command(),
                   progress=not args.no_progress and sys.stderr.isatty(), say=_say)
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        print(f"checkpoint: {result.checkpoint}  (device {result.device}, validation accuracy "
              f"{result.val_accuracy:.3f}, {result.seconds:.0f} s)\ncurve: {result.curve_csv}, {result.curve_png}")
    return 0


def _eval(args) -> int:
    from .evaluate import evaluate
    from .reward import BUNDLED_CHECKPOINT

    report = evaluate(args.data, args.checkpoint or BUNDLED_CHECKPOINT, split=args.split, max_pairs=args.max_pairs,
                      out_dir=args.out, seed=args.seed, attack_sample=args.attack_sample,
                      stability_sample=args.stability_sample, say=_say)
    print(json.dumps(report, indent=1) if args.json else report["markdown"])
    return 0


def _score(args) -> int:
    from .reward import BUNDLED_CHECKPOINT, scorer_for

    scorer = scorer_for(args.checkpoint or BUNDLED_CHECKPOINT)
    files = {}
    for path in args.files:
        with open(path, "rb") as f:
            files[path] = f.read()
    scores = scorer.score_files(files, args.aggregate)
    for record in scores.files:
        shown = "-" if record.score is None else f"{record.score:.3f}"
        print(f"{shown:>6}  {record.path}" + (f"  ({record.problem})" if record.problem else ""))
    print(f"{scores.total:>6.3f}  ({args.aggregate} over {sum(len(r.units) for r in scores.files)} units)")
    return 0
