"""Leaderboards: rank ``results.json`` files of one suite version, with confidence intervals.

The headline metric (pass@1 by default) is a mean over tasks; its 95% interval is a percentile
bootstrap over tasks (fixed seed, so the same files always give the same page). The HTML page is one
self-contained file: inline CSS, a few lines of inline JavaScript for sorting, SVG plots drawn here.
"""

from __future__ import annotations

import html
import json
import os
from typing import Any, Sequence

import jsonschema
import numpy as np

import agentenv
from agentenv import LeaderboardError

BOOTSTRAP_SAMPLES = 2000
#: values equal to this many digits are a tie (they share a rank)
TIE_DIGITS = 9
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")


# --------------------------------------------------------------------------- loading

def _schema() -> dict[str, Any]:
    with open(os.path.join(agentenv.bundled_dir("schemas"), "result.schema.json")) as f:
        return json.load(f)


def load_results(paths: Sequence[str]) -> list[dict[str, Any]]:
    """Read and validate every results file (a folder means its ``results.json``)."""

    validator = jsonschema.Draft202012Validator(_schema())
    runs = []
    for path in paths:
        file = os.path.join(path, "results.json") if os.path.isdir(path) else path
        try:
            with open(file, encoding="utf-8") as f:
                doc = json.load(f, parse_constant=_no_constant)
        except OSError as exc:
            raise LeaderboardError(f"{file}: cannot read it ({exc.strerror}); pass results.json files written by "
                                   "agentenv eval, or their folders") from exc
        except json.JSONDecodeError as exc:
            raise LeaderboardError(f"{file}: not JSON ({exc.msg} at line {exc.lineno})") from exc
        except (ValueError, RecursionError) as exc:  # (NaN or Infinity, a number past str's digits, bad UTF-8)
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
            raise LeaderboardError(f"{file}: not a results.json agentenv eval writes ({why})") from exc
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            lines = [f"  - /{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in errors[:10]]
            raise LeaderboardError(f"{file}: {len(errors)} problem(s) against schemas/result.schema.json "
                                   "(is it a results.json from agentenv eval?)\n" + "\n".join(lines))
        doc["_file"] = file
        runs.append(doc)
    return runs


def _no_constant(name: str) -> Any:
    """NaN and Infinity, which no results.json agentenv writes holds (a NaN success rate passed the
    schema's bounds, then ranked first, or crashed the heatmap)."""
    raise ValueError(f"{name} is not a number a results.json holds")


# --------------------------------------------------------------------------- ranking

def _task_values(run: dict[str, Any], metric: str) -> list[float]:
    """Per-task values of *metric*, a task with no scored sample counts 0."""
    out = []
    for task in run["tasks"]:
        if metric.startswith("pass@"):
            value = task["pass_at_k"].get(metric[5:])
        else:
            value = task.get(metric)
        out.append(0.0 if value is None else float(value))
    return out


def bootstrap_ci(values: Sequence[float], seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of *values* (resampling tasks)."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return (float(data.mean()) if len(data) else 0.0,) * 2
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(BOOTSTRAP_SAMPLES, len(data)))].mean(axis=1)
    low, high = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(low), float(high)


def build_board(runs: list[dict[str, Any]], metric: str = "pass@1") -> dict[str, Any]:
    """Rank *runs* by *metric*; refuses runs of different suites, suite versions or task sets."""
    if not runs:
        raise LeaderboardError("no results to rank")
    suites = {(r["suite"]["name"], r["suite"]["version"]) for r in runs}
    if len(suites) > 1:
        listing = "\n".join(f"  - {r['_file']}: suite {r['suite']['name']} {r['suite']['version']}" for r in runs)
        raise LeaderboardError("refusing to rank runs of different suite versions together (their tasks and "
                               "scores are not comparable); make one leaderboard per suite version:\n" + listing)
    task_sets = {tuple(sorted(t["task_id"] for t in r["tasks"])) for r in runs}
    if len(task_sets) > 1:
        listing = "\n".join(f"  - {r['_file']}: {len(r['tasks'])} tasks" for r in runs)
        raise LeaderboardError("refusing to rank runs over different task sets (a --tasks filter?); rerun them "
                               "on the same tasks:\n" + listing)
    allowed = ("mean_reward", "success_rate", "mean_score")
    if not (metric.startswith("pass@") or metric in allowed):
        raise LeaderboardError(f"unknown metric {metric!r}; use pass@K, {', '.join(allowed)}")
    if metric.startswith("pass@"):
        missing = [r["_file"] for r in runs if metric[5:] not in r["overall"]["pass_at_k"]]
        if missing:
            raise LeaderboardError(f"{metric} is not in {', '.join(missing)} (it was run without -k {metric[5:]}); "
                                   "pick a k every run has, e.g. --metric pass@1")
    ks = sorted({int(k) for r in runs for k in r["overall"]["pass_at_k"]})
    rows = []
    for r in runs:
        values = _task_values(r, metric)
        low, high = bootstrap_ci(values)
        o = r["overall"]
        rows.append({"agent": r["agent"]["spec"], "file": r["_file"], "metric": metric,
                     "value": float(np.mean(values)), "ci_low": low, "ci_high": high,
                     "pass_at_k": {str(k): o["pass_at_k"].get(str(k)) for k in ks},
                     "mean_reward": o["mean_reward"], "success_rate": o["success_rate"],
                     "mean_rounds": o["mean_rounds"], "episodes": o["episodes"], "samples": r["config"]["samples"],
                     "infrastructure_failures": o["failures"]["infrastructure"],
                     "failures": o["failures"], "wall_time_s": r["wall_time_s"], "complete": r["complete"],
                     "created": r["created"]})
    for row, label in zip(rows, run_labels(runs)):
        row["label"] = label
    order = sorted(range(len(rows)), key=lambda i: (-round(rows[i]["value"], TIE_DIGITS), rows[i]["label"]))
    ranked = [rows[i] for i in order]
    runs = [runs[i] for i in order]
    for position, row in enumerate(ranked):
        # competition ranking ("1224"): runs with the same value share a rank
        tied_above = position > 0 and round(ranked[position - 1]["value"], TIE_DIGITS) == round(row["value"], TIE_DIGITS)
        row["rank"] = ranked[position - 1]["rank"] if tied_above else position + 1
        row["overlaps_leader"] = position > 0 and row["ci_high"] >= ranked[0]["ci_low"]
    for row in ranked:
        row["tied"] = sum(r["rank"] == row["rank"] for r in ranked) > 1
    suite_name, suite_version = next(iter(suites))
    return {"suite": {"name": suite_name, "version": suite_version}, "metric": metric, "ks": ks, "rows": ranked,
            "tasks": _task_matrix(runs), "tags": _tag_matrix(runs),
            "rewards": [[t_r for t in r["tasks"] for t_r in t["rewards"]] for r in runs]}


def run_labels(runs: list[dict[str, Any]]) -> list[str]:
    """A name per run that tells runs apart: the agent spec, and for an agent that ran more than
    once what differs between its runs (seed, samples, reward mode, folder, date)."""
    specs = [r["agent"]["spec"] for r in runs]
    labels = list(specs)
    for spec in set(specs):
        same = [i for i, s in enumerate(specs) if s == spec]
        if len(same) < 2:
            continue
        for name, value in (("seed", lambda r: r["config"]["seed"]), ("samples", lambda r: r["config"]["samples"]),
                            ("reward", lambda r: r["config"]["reward_mode"]),
                            ("run", lambda r: os.path.basename(os.path.dirname(os.path.abspath(r["_file"])))),
                            ("created", lambda r: r["created"])):
            values = [value(runs[i]) for i in same]
            if len(set(map(str, values))) == len(values):
                for i, v in zip(same, values):
                    labels[i] = f"{spec} ({name} {v})"
                break
        else:
            for n, i in enumerate(same, 1):
                labels[i] = f"{spec} (#{n})"
    return labels


def _task_matrix(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids = [t["task_id"] for t in runs[0]["tasks"]]
    by_run = [{t["task_id"]: t for t in r["tasks"]} for r in runs]
    return [{"task_id": tid, "tags": by_run[0][tid]["tags"],
             "success_rate": [m[tid]["success_rate"] for m in by_run]} for tid in ids]


def _tag_matrix(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each tag's mean success rate in each run, over the tasks the first run tags with it (a run whose
    tasks were tagged otherwise, with the same suite version, divided by zero)."""
    first = runs[0]["tasks"]
    by_run = [{t["task_id"]: t for t in r["tasks"]} for r in runs]
    out = []
    for tag in sorted({tag for t in first for tag in t["tags"]}):
        ids = [t["task_id"] for t in first if tag in t["tags"]]
        values = [sum(m[tid]["success_rate"] or 0.0 for tid in ids) / len(ids) for m in by_run]
        out.append({"tag": tag, "tasks": len(ids), "success_rate": values})
    return out


# --------------------------------------------------------------------------- text and Markdown

def _f(value: Any, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _other_ks(board: dict[str, Any]) -> list[int]:
    """The pass@k columns besides the headline (which has its own column)."""
    return [k for k in board["ks"] if f"pass@{k}" != board["metric"]]


def _columns(board: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    ks = _other_ks(board)
    head = ["rank", "agent", f"{board['metric']} [95% CI]"] + [f"pass@{k}" for k in ks] + [
        "mean reward", "mean rounds", "episodes", "infra failures"]
    body = []
    for row in board["rows"]:
        flag = "" if row["complete"] else " (incomplete)"
        body.append([str(row["rank"]), row["label"] + flag,
                     f"{row['value']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"]
                    + [_f(row["pass_at_k"][str(k)]) for k in ks]
                    + [_f(row["mean_reward"]), _f(row["mean_rounds"], 2), str(row["episodes"]),
                       str(row["infrastructure_failures"])])
    return head, body


def render_text(board: dict[str, Any]) -> str:
    head, body = _columns(board)
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = [f"suite {board['suite']['name']} {board['suite']['version']}, ranked by {board['metric']} "
             f"(95% bootstrap CI over {len(board['tasks'])} tasks)"]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, ["-" * w for w in widths], *body]]
    return "\n".join(lines)


def _md_cell(text: str) -> str:
    """*text* as one cell of a Markdown table: on one line, its ``|`` escaped, and no markup a renderer
    would run (an agent spec or a run's folder name may hold ``<img onerror=...>`` or a newline)."""
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def render_markdown(board: dict[str, Any]) -> str:
    head, body = _columns(board)
    # (the suite's name and version are the task document's: markup or a newline there is text too)
    lines = [f"## {_md_cell(board['suite']['name'])} {_md_cell(board['suite']['version'])}: ranked by "
             f"{_md_cell(board['metric'])}", "",
             "| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in body]
    lines += ["", f"95% confidence intervals: percentile bootstrap over the {len(board['tasks'])} tasks "
                  f"({BOOTSTRAP_SAMPLES} resamples). Infrastructure failures are not scored.", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- HTML
#
# Every plot is an SVG with a viewBox, scaled down to the page's width (never wider: a phone shows
# the whole figure). Runs are told apart by colour, dash pattern and marker together, and lines
# with the same values are drawn side by side, so that no run hides another. Plots that would grow
# with the number of tags or tasks are heatmaps with one row each, so labels never overlap.

#: stroke-dasharray per run (with the colour and the marker: three cues, for overlapping lines)
DASHES = ("", "7 4", "2 3", "10 3 2 3", "4 2")
MARKERS = ("circle", "square", "triangle", "diamond")
PLOT_WIDTH = 480
#: px per character of an 11 px label, for laying out label columns
CHAR_W = 6.4


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _svg(width: float, height: float, body: list[str], title: str, note: str = "") -> str:
    caption = _e(title) + (f' <span class="note">{_e(note)}</span>' if note else "")
    return (f'<figure><figcaption>{caption}</figcaption><svg xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" role="img" '
            f'aria-label="{_e(title)}">' + "".join(body) + "</svg></figure>")


def _axes(x0: float, y0: float, w: float, h: float, ymax: float = 1.0) -> list[str]:
    out = [f'<line x1="{x0}" y1="{y0}" x2="{x0 + w}" y2="{y0}" class="axis"/>',
           f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 - h}" class="axis"/>']
    for i in range(5):
        v = ymax * i / 4
        y = y0 - h * i / 4
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + w}" y2="{y:.1f}" class="grid"/>'
                   f'<text x="{x0 - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">{v:.2f}</text>')
    return out


def _marker(kind: str, x: float, y: float, color: str, title: str = "") -> str:
    tip = f"<title>{_e(title)}</title>" if title else ""
    if kind == "square":
        return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="{color}">{tip}</rect>'
    if kind == "triangle":
        return f'<polygon points="{x:.1f},{y - 5:.1f} {x + 5:.1f},{y + 4:.1f} {x - 5:.1f},{y + 4:.1f}" fill="{color}">{tip}</polygon>'
    if kind == "diamond":
        return f'<polygon points="{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}" fill="{color}">{tip}</polygon>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color}">{tip}</circle>'


def _style(i: int) -> tuple[str, str, str]:
    """(colour, dash pattern, marker) of the i-th run."""
    return PALETTE[i % len(PALETTE)], DASHES[i % len(DASHES)], MARKERS[i % len(MARKERS)]


def _legend(rows: list[dict[str, Any]], x: float, y: float, width: float, notes: dict[int, str] | None = None,
            lines: bool = False, swatch: bool = False) -> tuple[list[str], float]:
    """A legend below a plot, in as many columns as fit; returns (elements, its height)."""
    labels = [row["label"] + (f" {notes[i]}" if notes and i in notes else "") for i, row in enumerate(rows)]
    col_w = min(width, max(len(t) for t in labels) * CHAR_W + 34)
    cols = max(1, int(width // col_w))
    out = []
    for i, text in enumerate(labels):
        cx, cy = x + (i % cols) * col_w, y + (i // cols) * 18
        color, dash, marker = _style(i)
        if lines:
            out.append(f'<line x1="{cx}" y1="{cy + 5}" x2="{cx + 22}" y2="{cy + 5}" stroke="{color}" stroke-width="2" '
                       f'stroke-dasharray="{dash}"/>')
        out.append(_marker("square" if swatch else marker, cx + 11, cy + 5, color))
        out.append(f'<text x="{cx + 28}" y="{cy + 9}" class="tick">{_e(text)}</text>')
    return out, 18 * ((len(labels) + cols - 1) // cols)


def _plot_pass_at_k(board: dict[str, Any]) -> str:
    ks, rows = board["ks"], board["rows"]
    if len(ks) == 1:
        return _plot_single_k(board, ks[0])
    x0, y0, w, h = 50, 200, PLOT_WIDTH - 80, 170
    body = _axes(x0, y0, w, h)
    xs = {k: x0 + 20 + (w - 40) * i / (len(ks) - 1) for i, k in enumerate(ks)}
    for k, x in xs.items():
        body.append(f'<text x="{x:.1f}" y="{y0 + 16}" class="tick" text-anchor="middle">k={k}</text>')
    series = [tuple(row["pass_at_k"][str(k)] for k in ks) for row in rows]
    notes = {i: f"(= {rows[series.index(v)]['label']})" for i, v in enumerate(series) if series.index(v) != i}
    for i, row in enumerate(rows):
        color, dash, marker = _style(i)
        # a run whose values equal an earlier run's is drawn 3 px lower per copy (and named in the legend)
        # so that neither line hides the other; distinct values are drawn where they are
        copies = series[:i].count(series[i])
        pts = [(xs[k] + 5 * copies, y0 - h * v + 3 * copies, v) for k, v in zip(ks, series[i]) if v is not None]
        if len(pts) > 1:
            body.append(f'<polyline points="{" ".join(f"{x:.1f},{y:.1f}" for x, y, _ in pts)}" fill="none" '
                        f'stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>')
        body += [_marker(marker, x, y, color, f"{row['label']}: pass@{k} = {v:.3f}") for (x, y, v), k in zip(pts, ks)]
    legend, lh = _legend(rows, x0 - 40, y0 + 30, PLOT_WIDTH - 20, notes, lines=True)
    return _svg(PLOT_WIDTH, y0 + 36 + lh, body + legend, "pass@k per run")


def _plot_single_k(board: dict[str, Any], k: int) -> str:
    """With one k a pass@k curve is a dot per run: show each run's pass@k, with its 95% interval
    when it is the headline metric, one row per run."""
    rows = board["rows"]
    with_ci = board["metric"] == f"pass@{k}"
    left = min(max(len(r["label"]) for r in rows) * CHAR_W + 12, 200)
    x0, w, top, row_h = left, PLOT_WIDTH - left - 56, 10, 22
    body = []
    for i in range(5):
        x = x0 + w * i / 4
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + row_h * len(rows)}" class="grid"/>'
                    f'<text x="{x:.1f}" y="{top + row_h * len(rows) + 14}" class="tick" text-anchor="middle">{i / 4:.2f}</text>')
    for i, row in enumerate(rows):
        color, _, marker = _style(i)
        y = top + row_h * i + row_h / 2
        value = row["pass_at_k"][str(k)] or 0.0
        body.append(f'<text x="{x0 - 8}" y="{y + 4:.1f}" class="tick" text-anchor="end">{_e(row["label"][:30])}</text>')
        if with_ci:
            body.append(f'<line x1="{x0 + w * row["ci_low"]:.1f}" y1="{y:.1f}" x2="{x0 + w * row["ci_high"]:.1f}" '
                        f'y2="{y:.1f}" stroke="{color}" stroke-width="3" opacity="0.45"/>')
        body.append(_marker(marker, x0 + w * value, y, color, f"{row['label']}: pass@{k} = {value:.3f}"))
        body.append(f'<text x="{x0 + w + 8}" y="{y + 4:.1f}" class="tick">{value:.3f}</text>')
    return _svg(PLOT_WIDTH, top + row_h * len(rows) + 22, body, f"pass@{k} per run" + (", 95% CI" if with_ci else ""),
                note="(one k was run: eval with --samples N -k 1,N draws pass@k curves)")


def _plot_rewards(board: dict[str, Any]) -> str:
    rows, rewards = board["rows"], board["rewards"]
    flat = [v for r in rewards for v in r] or [0.0]
    lo, hi = min(0.0, min(flat)), max(1.0, max(flat))
    bins = 10
    counts = [np.histogram(r, bins=bins, range=(lo, hi))[0] if r else np.zeros(bins, int) for r in rewards]
    fractions = [c / max(c.sum(), 1) for c in counts]
    x0, y0, w, h = 50, 200, PLOT_WIDTH - 70, 170
    body = _axes(x0, y0, w, h)
    slot = w / bins
    bar = slot * 0.8 / max(len(rows), 1)
    for b in range(0, bins + 1, 2):
        body.append(f'<text x="{x0 + slot * b:.1f}" y="{y0 + 16}" class="tick" text-anchor="middle">'
                    f'{lo + (hi - lo) * b / bins:.1f}</text>')
    for b in range(bins):
        for i, frac in enumerate(fractions):
            height = h * float(frac[b])
            body.append(f'<rect x="{x0 + slot * b + slot * 0.1 + bar * i:.1f}" y="{y0 - height:.1f}" '
                        f'width="{bar:.1f}" height="{height:.1f}" fill="{_style(i)[0]}">'
                        f'<title>{_e(rows[i]["label"])}: {int(counts[i][b])} episode(s)</title></rect>')
    legend, lh = _legend(rows, x0 - 40, y0 + 30, PLOT_WIDTH - 20, swatch=True)
    return _svg(PLOT_WIDTH, y0 + 36 + lh, body + legend, "reward distribution (share of episodes per reward bin)")


def _heat_color(value: float | None) -> str:
    if value is None:
        return "#dddddd"
    # red (0) -> yellow (0.5) -> green (1)
    r = int(220 if value < 0.5 else 220 - (value - 0.5) * 2 * 170)
    g = int(60 + value * 2 * 140 if value < 0.5 else 200)
    return f"rgb({r},{g},70)"


def _heatmap(rows: list[dict[str, Any]], names: list[str], titles: list[str], values: list[list[float | None]],
             title: str) -> str:
    """Rows (tasks or tags) by runs, one row each whatever their number; run labels written
    vertically above their column, so neither kind of label can overlap another."""
    cell_w, cell_h = 54, 18
    left = min(max([len(n) for n in names] + [4]) * CHAR_W + 12, 280)
    top = min(max(len(r["label"]) for r in rows), 30) * CHAR_W + 12
    body = []
    for i, row in enumerate(rows):
        x = left + cell_w * i + cell_w / 2 + 4
        body.append(f'<text transform="translate({x:.1f},{top - 6:.1f}) rotate(-90)" class="tick">'
                    f'{_e(row["label"][:30])}<title>{_e(row["label"])}</title></text>')
    limit = int((left - 12) / CHAR_W)
    for j, (name, tip) in enumerate(zip(names, titles)):
        y = top + cell_h * j
        shown = name if len(name) <= limit else name[:limit - 1] + "…"
        body.append(f'<text x="{left - 6}" y="{y + 13}" class="tick" text-anchor="end">{_e(shown)}'
                    f'<title>{_e(tip)}</title></text>')
        for i, value in enumerate(values[j]):
            body.append(f'<rect x="{left + cell_w * i}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" '
                        f'fill="{_heat_color(value)}"><title>{_e(tip)} / {_e(rows[i]["label"])}: {_f(value)}</title>'
                        f'</rect><text x="{left + cell_w * i + cell_w / 2 - 1}" y="{y + 13}" class="cell" '
                        f'text-anchor="middle">{_f(value, 2)}</text>')
    return _svg(left + cell_w * len(rows) + 10, top + cell_h * len(names) + 6, body, title)


def _plot_heatmap(board: dict[str, Any]) -> str:
    tasks = board["tasks"]
    prefix = board["suite"]["name"] + "."  # the suite's tasks share it: the rows show the rest
    names = [t["task_id"][len(prefix):] if t["task_id"].startswith(prefix) else t["task_id"] for t in tasks]
    return _heatmap(board["rows"], names, [t["task_id"] for t in tasks], [t["success_rate"] for t in tasks],
                    f"per-task success rate (rows: tasks, {prefix}* shortened; columns: runs)")


def _plot_tags(board: dict[str, Any]) -> str:
    tags = board["tags"]
    if not tags:
        return "<p>No task has tags.</p>"
    return _heatmap(board["rows"], [f"{t['tag']} ({t['tasks']})" for t in tags],
                    [f"{t['tag']}: {t['tasks']} task(s)" for t in tags], [t["success_rate"] for t in tags],
                    "success rate per tag (number of tasks; columns: runs)")


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px;overflow-wrap:anywhere}p.sub{color:#666;margin:0 0 16px}
.scroll{overflow-x:auto;max-width:100%;margin:8px 0 24px}
table{border-collapse:collapse}th,td{padding:4px 10px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
th{cursor:pointer;user-select:none;background:#f6f6f6;position:sticky;top:0}th:hover{background:#ececec}
td.l,th.l{text-align:left}th.asc::after{content:" \\25B2"}th.desc::after{content:" \\25BC"}
tr.tie td{color:#555}.ci{color:#888;font-size:12px}.tied{color:#888;font-size:11px}
.plots{display:flex;flex-wrap:wrap;gap:24px}figure{margin:0;min-width:0;max-width:100%}
figcaption{font-weight:600;margin-bottom:4px}figcaption .note{font-weight:400;color:#777;font-size:12px}
svg{max-width:100%;height:auto;display:block}
.axis{stroke:#333}.grid{stroke:#eee}.tick{font-size:11px;fill:#444}.cell{font-size:10px;fill:#111}
@media (max-width:600px){body{margin:10px}}
"""
_JS = """
(function(){
  var table=document.getElementById('board');
  var heads=table.tHead.rows[0].cells;
  function key(cell,numeric){var v=cell.getAttribute('data-v');return numeric?parseFloat(v):v;}
  for(var i=0;i<heads.length;i++){(function(col){
    heads[col].addEventListener('click',function(){
      var th=heads[col],numeric=th.getAttribute('data-type')==='num';
      var dir=th.classList.contains('desc')?1:th.classList.contains('asc')?-1:(numeric?-1:1);
      for(var j=0;j<heads.length;j++)heads[j].classList.remove('asc','desc');
      th.classList.add(dir===1?'asc':'desc');
      var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){var x=key(a.cells[col],numeric),y=key(b.cells[col],numeric);
        if(numeric){if(isNaN(x))x=-Infinity;if(isNaN(y))y=-Infinity;}
        return x<y?-dir:x>y?dir:0;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  })(i);}
})();
"""


def render_html(board: dict[str, Any]) -> str:
    """One self-contained page: sortable table and SVG plots; nothing is fetched at view time."""
    metric = board["metric"]
    cols = [("rank", "num"), ("agent", "text"), (metric, "num"), ("95% CI", "num")] + [
        (f"pass@{k}", "num") for k in _other_ks(board)] + [("mean reward", "num"), ("mean rounds", "num"),
                                                      ("episodes", "num"), ("infra failures", "num"),
                                                      ("wall time s", "num")]
    head = "".join(f'<th data-type="{t}" class="{"l" if t == "text" else ""}">{_e(n)}</th>' for n, t in cols)
    body = []
    for row in board["rows"]:
        def cell(value, text=None, cls=""):
            v = "" if value is None else value
            return f'<td data-v="{_e(v)}" class="{cls}">{_e(text if text is not None else _f(value))}</td>'
        rank = f'<td data-v="{row["rank"]}">{row["rank"]}{"<span class=tied> tie</span>" if row["tied"] else ""}</td>'
        cells = [rank,
                 cell(row["label"], row["label"] + ("" if row["complete"] else " (incomplete)"), "l"),
                 cell(row["value"]),
                 f'<td data-v="{row["ci_low"]:.6f}" class="ci">[{row["ci_low"]:.3f}, {row["ci_high"]:.3f}]</td>']
        cells += [cell(row["pass_at_k"][str(k)]) for k in _other_ks(board)]
        cells += [cell(row["mean_reward"]), cell(row["mean_rounds"], _f(row["mean_rounds"], 2)),
                  cell(row["episodes"], str(row["episodes"])),
                  cell(row["infrastructure_failures"], str(row["infrastructure_failures"])),
                  cell(row["wall_time_s"], f"{row['wall_time_s']:.1f}")]
        body.append(f'<tr class="{"tie" if row["overlaps_leader"] else ""}">{"".join(cells)}</tr>')
    suite = board["suite"]
    plots = [_plot_pass_at_k(board), _plot_rewards(board), _plot_tags(board), _plot_heatmap(board)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>agentenv leaderboard: {_e(suite['name'])} {_e(suite['version'])}</title>"
            f"<style>{_CSS}</style></head><body>"
            f"<h1>{_e(suite['name'])} {_e(suite['version'])}: ranked by {_e(metric)}</h1>"
            f"<p class=\"sub\">{len(board['rows'])} run(s) over {len(board['tasks'])} task(s). 95% intervals: "
            f"percentile bootstrap over tasks ({BOOTSTRAP_SAMPLES} resamples); grey rows overlap the leader's "
            "interval; equal values share a rank. Infrastructure failures are not scored. Click a column to sort.</p>"
            f"<div class=\"scroll\"><table id=\"board\"><thead><tr>{head}</tr></thead><tbody>{''.join(body)}"
            "</tbody></table></div>"
            f"<div class=\"plots\">{''.join(plots)}</div>"
            f"<script>{_JS}</script></body></html>\n")
