import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "rotate_logs.sh"


def rotate(d, *args):
    return subprocess.run(["bash", str(SCRIPT), str(d), *args], cwd=SCRIPT.parent,
                          capture_output=True, text=True, timeout=30)


def test_spaces_in_names(tmp_path):
    log = tmp_path / "payment gateway.log"
    log.write_text("x")
    r = rotate(tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "rotated payment gateway.log\n"
    assert (tmp_path / "payment gateway.log.1").read_text() == "x"


def test_keep_one(tmp_path):
    log = tmp_path / "w.log"
    for gen in ("1", "2", "3"):
        log.write_text(gen)
        rotate(tmp_path, "1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.log", "w.log.1"]
    assert (tmp_path / "w.log.1").read_text() == "3"


def test_dir_with_space(tmp_path):
    d = tmp_path / "var log"
    d.mkdir()
    (d / "a.log").write_text("a")
    rotate(d, "3")
    assert (d / "a.log.1").read_text() == "a"
