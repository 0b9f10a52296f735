import subprocess


def run(tmp_path):
    out = subprocess.run(["bash", "report.sh", str(tmp_path)], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def make(tmp_path, files):
    for name, size in files.items():
        (tmp_path / name).write_bytes(b"x" * size)


def test_order(tmp_path):
    make(tmp_path, {"a": 10, "b": 300, "c": 20})
    lines = run(tmp_path)
    assert [l.split("\t")[1].rsplit("/", 1)[1] for l in lines[:-1]] == ["b", "c", "a"]


def test_total(tmp_path):
    make(tmp_path, {"a": 10, "b": 5})
    assert run(tmp_path)[-1] == "TOTAL\t15"


def test_spaces(tmp_path):
    make(tmp_path, {"my file.txt": 7})
    lines = run(tmp_path)
    assert lines[0] == f"7\t{tmp_path}/my file.txt"
    assert lines[-1] == "TOTAL\t7"
