"""``agentenv leaderboard`` over eval results; the HTML page checked in a real headless chromium.

The inputs are ``results.json`` files that real evals wrote (``tests/fixtures/leaderboard``: the
examples suite's fizzbuzz, bank_transfer and disk_report tasks, 2 samples, agents noop, reference
and random:1), so these tests need no sandbox; ``tests/test_eval.py`` checks that eval writes them.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

import pytest

from agentenv import LeaderboardError
from agentenv._cli import main
from agentenv.builtin.eval.leaderboard import bootstrap_ci, build_board, load_results, render_html

pytestmark = pytest.mark.unit

HERE = os.path.dirname(os.path.abspath(__file__))
ARTIFACTS = os.path.join(HERE, "artifacts")
FIXTURES = os.path.join(HERE, "fixtures", "leaderboard")


@pytest.fixture()
def result_files(tmp_path):
    files = []
    for agent in ("noop", "reference", "random_1"):
        os.makedirs(tmp_path / agent)
        shutil.copy(os.path.join(FIXTURES, agent, "results.json"), tmp_path / agent / "results.json")
        files.append(str(tmp_path / agent / "results.json"))
    return files


def test_leaderboard_ranks_runs_with_confidence_intervals(result_files, tmp_path, capsys):
    md = tmp_path / "board.md"
    assert main(["leaderboard", *result_files, "--markdown", str(md)]) == 0
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if re.match(r"^\d ", line)]
    assert lines[0].split()[1] == "reference" and "1.000 [1.000, 1.000]" in lines[0]
    assert {lines[1].split()[1], lines[2].split()[1]} == {"noop", "random:1"}
    table = md.read_text()
    assert "| 1 | reference | 1.000 [1.000, 1.000] |" in table and "bootstrap" in table
    board = build_board(load_results(result_files), "mean_reward")
    assert [r["agent"] for r in board["rows"]][0] == "reference"
    assert board["ks"] == [1, 2] and len(board["tasks"]) == 3


def test_bootstrap_interval_brackets_the_mean_and_shrinks_with_more_tasks():
    few = [1, 0, 1, 0]
    low, high = bootstrap_ci(few)
    assert low < 0.5 < high
    low_many, high_many = bootstrap_ci(few * 25)
    assert low <= low_many < 0.5 < high_many <= high and high_many - low_many < high - low
    assert bootstrap_ci(few) == bootstrap_ci(few)  # deterministic: the same files give the same page


def test_leaderboard_refuses_different_suite_versions_with_the_reason(result_files, tmp_path, capsys):
    doc = json.load(open(result_files[1]))
    doc["suite"]["version"] = "2.0.0"
    other = tmp_path / "results.json"
    other.write_text(json.dumps(doc))
    assert main(["leaderboard", result_files[0], str(other)]) == 1
    err = capsys.readouterr().err
    assert "refusing to rank runs of different suite versions" in err
    assert f"{other}: suite examples 2.0.0" in err and "examples 1.0.0" in err
    fewer = copy.deepcopy(json.load(open(result_files[1])))
    fewer["tasks"] = fewer["tasks"][:2]
    other.write_text(json.dumps(fewer))
    with pytest.raises(LeaderboardError, match="different task sets"):
        build_board(load_results([result_files[0], str(other)]))
    with pytest.raises(LeaderboardError, match="pass@5 is not in"):
        build_board(load_results(result_files), "pass@5")


def test_leaderboard_names_the_file_and_field_of_a_bad_results_file(tmp_path, capsys):
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps({"schema": "agentenv.result/1", "overall": {}}))
    assert main(["leaderboard", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and "'agent' is a required property" in err
    assert main(["leaderboard", str(tmp_path / "nope.json")]) == 1
    assert "nope.json: cannot read it" in capsys.readouterr().err


def test_names_from_results_files_reach_the_terminal_escaped(result_files, tmp_path, capsys):
    """A results file is anyone's (a submission to a leaderboard): its agent name may carry what a
    terminal acts on (retitle, conceal, rewrite the line); the ranking and the error line show it."""
    hostile = "evil\x1b]0;pwned\x07\x1b[8m\r\u202e"
    with open(result_files[0]) as f:
        doc = json.load(f)
    doc["agent"] = {"spec": hostile, "name": hostile}
    with open(result_files[0], "w") as f:
        json.dump(doc, f)
    assert main(["leaderboard", *result_files]) == 0
    out = capsys.readouterr().out
    assert "evil\\x1b]0;pwned\\x07\\x1b[8m\\r\\u202e" in out and not {"\x1b", "\x07", "\r", "\u202e"} & set(out)
    assert main(["leaderboard", str(tmp_path / "nope\x1b[8m.json")]) == 1
    err = capsys.readouterr().err
    assert "nope\\x1b[8m.json: cannot read it" in err and "\x1b" not in err


def test_crafted_results_files_are_refused_by_name_and_odd_honest_ones_rank(result_files, tmp_path, capsys):
    """A results file is anyone's: NaN and Infinity (a NaN success rate passed the schema's bounds and
    ranked first, or crashed the heatmap), nesting past the parser's depth, bytes that are not UTF-8 and
    a k of 5,000 digits ended `agentenv leaderboard` in a traceback; two honest runs of one suite
    version whose tasks were tagged otherwise divided by zero (red team, stop 37)."""
    text = open(result_files[1]).read()
    doc = json.loads(text)
    crafted = {"nan.json": text.replace('"success_rate": 1.0', '"success_rate": NaN', 1),
               "inf.json": text.replace('"success_rate": 1.0', '"success_rate": Infinity', 1),
               "deep.json": text[:-2] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
               "k.json": json.dumps({**doc, "overall": {**doc["overall"], "pass_at_k": {"9" * 5000: 1.0}}})}
    for name, body in crafted.items():
        (tmp_path / name).write_text(body)
    (tmp_path / "bytes.json").write_bytes(text.replace('"reference"', '"ref\udcff"', 1).encode("utf-8", "surrogateescape"))
    for name in (*crafted, "bytes.json"):
        assert main(["leaderboard", result_files[0], str(tmp_path / name)]) == 1, name
        err = capsys.readouterr().err
        assert err.startswith(f"agentenv: error: {tmp_path / name}: ") and "Traceback" not in err, (name, err)
    untagged = copy.deepcopy(doc)
    for task in untagged["tasks"]:
        task["tags"] = []
    (tmp_path / "untagged.json").write_text(json.dumps(untagged))
    assert main(["leaderboard", result_files[1], str(tmp_path / "untagged.json"), "--html", str(tmp_path / "b.html")]) == 0
    capsys.readouterr()


def test_a_markdown_table_keeps_one_row_per_run_and_no_markup(result_files, tmp_path):
    for number, path in enumerate(result_files):
        with open(path) as f:
            doc = json.load(f)
        if number == 0:
            doc["agent"] = {"spec": "evil\n| x | y |\n<img src=x onerror=alert(1)>", "name": "evil"}
        # the suite's name and version are the task document's (the heading took them raw: red team, stop 39)
        doc["suite"]["name"] = "<img src=x onerror=alert(2)>\n| fake | row |"
        doc["suite"]["version"] = "1.0<script>alert(3)</script>"
        with open(path, "w") as f:
            json.dump(doc, f)
    md = tmp_path / "board.md"
    assert main(["leaderboard", *result_files, "--markdown", str(md)]) == 0
    text = md.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "evil" in line]
    assert len(rows) == 1 and "<img" not in rows[0] and "&lt;img src=x onerror=alert(1)&gt;" in rows[0], rows
    assert "evil \\| x \\| y \\|" in rows[0]
    assert "<img" not in text and "<script" not in text and "\n| fake" not in text, text[:300]
    assert text.splitlines()[0].startswith("## &lt;img src=x onerror=alert(2)&gt; \\| fake \\| row \\| 1.0&lt;script"), text[:300]


def test_html_page_is_self_contained(result_files):
    page = render_html(build_board(load_results(result_files)))
    assert "<svg" in page and page.count("<figure>") == 4
    assert not re.search(r"""(src|href)\s*=|<link|@import|url\(""", page)  # nothing fetched at view time


# --------------------------------------------------------------------------- the real browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class DevTools:
    """A minimal Chrome DevTools Protocol client over one page's websocket."""

    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.1))))

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")


@pytest.fixture()
def browser():
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    try:
        import websockets.sync.client  # noqa: F401
    except ImportError:
        pytest.skip("the websockets package is missing: pip install -e '.[test]'")
    profile = tempfile.mkdtemp(prefix="agentenv-chromium-")
    proc = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                             "--disable-component-update", "--disable-sync", "--no-first-run",
                             "--remote-debugging-port=0", "--remote-allow-origins=*", f"--user-data-dir={profile}",
                             "--window-size=1300,1100", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            match = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if match:
                port = int(match.group(1))
            elif not line and proc.poll() is not None:
                break
        assert port, f"chromium did not open its DevTools port (exit status {proc.poll()})"
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(p for p in pages if p["type"] == "page")
        from websockets.sync.client import connect

        with connect(page["webSocketDebuggerUrl"], max_size=64 * 2 ** 20) as ws:
            yield DevTools(ws)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def test_html_page_loads_without_errors_sorts_and_renders_in_chromium(result_files, tmp_path, browser):
    page = tmp_path / "board.html"
    assert main(["leaderboard", *result_files, "--html", str(page)]) == 0
    for domain in ("Runtime", "Log", "Page"):
        browser.call(f"{domain}.enable")
    browser.call("Page.navigate", url=page.as_uri())
    browser.wait_event("Page.loadEventFired")
    problems = [e for e in browser.events
                if e.get("method") == "Runtime.exceptionThrown"
                or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
                or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
    assert not problems, problems
    agents = "Array.from(document.querySelectorAll('#board tbody tr td:nth-child(2)')).map(td => td.textContent)"
    assert browser.evaluate(agents)[0] == "reference"
    header = "Array.from(document.querySelectorAll('#board th')).find(th => th.textContent === '{}')"
    browser.evaluate(header.format("agent") + ".click()")
    assert browser.evaluate(agents) == ["noop", "random:1", "reference"]
    browser.evaluate(header.format("agent") + ".click()")
    assert browser.evaluate(agents) == ["reference", "random:1", "noop"]
    browser.evaluate(header.format("mean rounds") + ".click()")  # numeric columns sort high to low first
    rounds = browser.evaluate("Array.from(document.querySelectorAll('#board tbody tr')).map("
                              "tr => parseFloat(tr.cells[tr.cells.length - 4].getAttribute('data-v')))")
    assert rounds == sorted(rounds, reverse=True) and len(set(rounds)) > 1
    assert browser.evaluate("document.querySelectorAll('svg').length") == 4
    assert browser.evaluate("document.querySelector('svg rect[fill]') !== null")
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
    path = os.path.join(ARTIFACTS, "leaderboard.png")
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot))
    assert os.path.getsize(path) > 10_000
    print(f"screenshot: {path}")


# --------------------------------------------------------------------------- every bundled suite, phone and desktop

SUITES = os.path.join(FIXTURES, "suites")  # real evals: tests/fixtures/leaderboard/record.sh
VIEWPORTS = {"phone": (390, 844, True), "desktop": (1280, 900, False)}
LAYOUT = """(() => {
  const svgs = Array.from(document.querySelectorAll('svg'));
  const overlaps = [];
  svgs.forEach((svg, s) => {
    const boxes = Array.from(svg.querySelectorAll('text')).map(t => [t.textContent, t.getBoundingClientRect()]);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const [a, p] = boxes[i], [b, q] = boxes[j];
      const w = Math.min(p.right, q.right) - Math.max(p.left, q.left), h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (w > 1 && h > 1) overlaps.push([s, a, b]);
    }
  });
  return {page: document.documentElement.scrollWidth, view: window.innerWidth, overlaps: overlaps.slice(0, 5),
          figures: svgs.map(s => [s.getAttribute('aria-label'), Math.round(s.getBoundingClientRect().left),
                                  Math.round(s.getBoundingClientRect().right)]),
          lines: Array.from(svgs[0].querySelectorAll('polyline')).map(p => p.getAttribute('points')),
          ranks: Array.from(document.querySelectorAll('#board tbody tr')).map(
              tr => [parseInt(tr.cells[0].getAttribute('data-v')), tr.cells[2].getAttribute('data-v'), tr.cells[1].textContent])};
})()"""


@pytest.mark.parametrize("suite", sorted(os.listdir(SUITES)))
def test_the_page_fits_a_phone_and_a_desktop_for_every_bundled_suite(suite, tmp_path, browser):
    runs = sorted(os.path.join(SUITES, suite, run) for run in os.listdir(os.path.join(SUITES, suite)))
    page = tmp_path / "board.html"
    page.write_text(render_html(build_board(load_results(runs))))
    browser.call("Page.enable")
    os.makedirs(ARTIFACTS, exist_ok=True)
    for name, (width, height, mobile) in VIEWPORTS.items():
        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=mobile)
        browser.events.clear()
        browser.call("Page.navigate", url=page.as_uri())
        browser.wait_event("Page.loadEventFired")
        seen = browser.evaluate(LAYOUT)
        where = f"{suite} on a {name} ({width} px)"
        assert seen["page"] <= seen["view"], f"{where}: the page scrolls sideways ({seen['page']} px)"
        for label, left, right in seen["figures"]:
            assert 0 <= left and right <= width, f"{where}: {label} spans {left}..{right} px"
        assert not seen["overlaps"], f"{where}: labels overlap: {seen['overlaps']}"
        ranks = seen["ranks"]
        for (rank, value, _), (other_rank, other_value, _) in zip(ranks, ranks[1:]):
            assert (rank == other_rank) == (value == other_value), f"{where}: ranks {ranks}"
        assert len({label for _, _, label in ranks}) == len(ranks), f"{where}: two runs look alike: {ranks}"
        k_values = json.load(open(os.path.join(runs[0], "results.json")))["config"]["k"]
        if len(k_values) > 1:  # lines, none hidden under another
            assert len(seen["lines"]) == len(runs) and len(set(seen["lines"])) == len(runs), seen["lines"]
        else:  # one k: a value per run, with its interval, instead of a curve of one point
            assert seen["figures"][0][0].startswith("pass@1 per run") and not seen["lines"]
        shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        with open(os.path.join(ARTIFACTS, f"leaderboard-{suite}-{name}.png"), "wb") as f:
            f.write(base64.b64decode(shot))
