import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "rotate_logs.sh"


def rotate(d, *args):
    return subprocess.run(["bash", str(SCRIPT), str(d), *args], cwd=SCRIPT.parent,
                          capture_output=True, text=True, timeout=30)


def test_first_rotation(tmp_path):
    (tmp_path / "app.log").write_text("one\n")
    r = rotate(tmp_path, "2")
    assert r.returncode == 0
    assert r.stdout == "rotated app.log\n"
    assert (tmp_path / "app.log.1").read_text() == "one\n"
    assert (tmp_path / "app.log").read_text() == ""


def test_keep_limit(tmp_path):
    log = tmp_path / "app.log"
    for gen in ("a", "b", "c", "d"):
        log.write_text(gen)
        rotate(tmp_path, "2")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["app.log", "app.log.1", "app.log.2"]
    assert (tmp_path / "app.log.1").read_text() == "d"
    assert (tmp_path / "app.log.2").read_text() == "c"


def test_empty_skipped(tmp_path):
    (tmp_path / "idle.log").write_text("")
    r = rotate(tmp_path)
    assert r.stdout == "" and not (tmp_path / "idle.log.1").exists()


def test_bad_dir(tmp_path):
    r = rotate(tmp_path / "missing")
    assert r.returncode == 2
