import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "top_errors.sh"


def line(path, status):
    return f'10.0.0.1 - - [10/Oct/2024:13:55:36 +0000] "GET {path} HTTP/1.1" {status} 512\n'


def run(tmp_path, lines, *args):
    log = tmp_path / "access.log"
    log.write_text("".join(lines))
    return subprocess.run(["bash", str(SCRIPT), str(log), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30)


def test_basic(tmp_path):
    r = run(tmp_path, [line("/a", 500), line("/a", 502), line("/b", 503), line("/c", 200)])
    assert r.returncode == 0
    assert r.stdout.splitlines() == ["2 /a", "1 /b"]


def test_ignores_client_errors(tmp_path):
    r = run(tmp_path, [line("/missing", 404)] * 3 + [line("/x", 500)])
    assert r.stdout.splitlines() == ["1 /x"]


def test_numeric_order(tmp_path):
    r = run(tmp_path, [line("/nine", 500)] * 9 + [line("/twelve", 500)] * 12)
    assert r.stdout.splitlines() == ["12 /twelve", "9 /nine"]


def test_missing_file(tmp_path):
    r = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "nope.log")], capture_output=True, text=True)
    assert r.returncode == 2
    assert "cannot read" in r.stderr
