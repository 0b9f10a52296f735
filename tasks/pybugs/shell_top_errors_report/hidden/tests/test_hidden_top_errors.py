import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "top_errors.sh"


def line(path, status):
    return f'10.0.0.2 - - [11/Oct/2024:01:00:00 +0000] "POST {path} HTTP/1.1" {status} 0\n'


def run(tmp_path, lines, *args):
    log = tmp_path / "access.log"
    log.write_text("".join(lines))
    return subprocess.run(["bash", str(SCRIPT), str(log), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30)


def test_limit_and_ties(tmp_path):
    lines = []
    for i, p in enumerate(["/e", "/d", "/c", "/b", "/a", "/f"]):
        lines += [line(p, 500)] * (3 if p in "/a/b" else 2)
    lines += [line("/z", 401)] * 50
    r = run(tmp_path, lines, "3")
    assert r.stdout.splitlines() == ["3 /a", "3 /b", "2 /c"]


def test_default_limit_is_five(tmp_path):
    lines = [line(f"/p{i}", 503) for i in range(8)] + [line("/p7", 504)] * 10
    r = run(tmp_path, lines)
    assert r.stdout.splitlines()[0] == "11 /p7"
    assert len(r.stdout.splitlines()) == 5


def test_no_errors(tmp_path):
    r = run(tmp_path, [line("/ok", 200), line("/gone", 410)])
    assert r.returncode == 0 and r.stdout == ""
