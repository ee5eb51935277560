"""Issue 52, items 1 and 6: every output goes through one writer. Nothing is written outside the
chosen folder (job ids with `/` and `..`), nothing through a symlink, no input is overwritten, a
failed write leaves no new file and no temporary file and ends in one line naming the path (exit 2),
and text from input reaches the terminal escaped."""

from __future__ import annotations

import copy
import errno
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from plan.planner import atomic_file
from plan.planner.atomic_file import WriteFailed, write_all, write_atomically
from plan.planner.output_target import (
    OutputRefused,
    check_output_file,
    component_map,
    safe_component,
)
from plan.planner.plain_text import plain
from tests.conftest import REPO
from tests.hardening.conftest import HOSTILE_BASE, invoke

PLAN = [sys.executable, "-c", "from plan.planner.cli.app import main; main()"]
HOSTILE_IDS = ["a/../../x", "../../etc", "a/b", "a/.", "x/..", "a:b", "a/../../../../tmp/pwned",
               "A" + "/.." * 40]


def _two_jobs(tmp_path: Path, second: str = "a/../../x") -> Path:
    data = copy.deepcopy(HOSTILE_BASE)
    data["jobs"].append({**data["jobs"][0], "id": second})
    path = tmp_path / "in" / "s.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _all_files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def _no_temporary_files(root: Path) -> bool:
    return not [p for p in root.rglob("*.tmp")]


@pytest.mark.parametrize("name", ["a", "pretrain", "sft-7b", "job_1", "Llama3.1-8B+lora@v2",
                                  "x" * 128])
def test_a_safe_id_is_its_own_folder(name: str) -> None:
    assert safe_component(name) == name  # goldens and every export of a normal id stay as they were


@pytest.mark.parametrize("name", HOSTILE_IDS)
def test_an_unsafe_id_becomes_one_safe_component(name: str) -> None:
    component = safe_component(name)
    assert "/" not in component and not component.startswith(".")
    assert component not in ("", ".", "..")
    assert len(component) <= 120 and safe_component(name) == component  # deterministic
    assert safe_component(component) == component


def test_ids_that_would_share_a_folder_are_kept_apart() -> None:
    for names in (["a/b", "a_b", "a:b"], ["a_b", "a/b"], ["job", "JOB", "Job"]):
        mapped = component_map(names)
        folders = {folder.lower() for folder in mapped.values()}  # apart even ignoring case
        assert len(folders) == len(names) and mapped == component_map(names)
        assert mapped[names[0]] == names[0] or "/" in names[0]  # the first safe id keeps its name


@pytest.mark.parametrize("second", ["a/../../x", "b/../../../escaped", "c/./d"])
def test_export_never_writes_outside_its_folder(tmp_path: Path, second: str) -> None:
    scenario = _two_jobs(tmp_path, second)
    out = tmp_path / "deep" / "out"
    code, _, stderr, escaped = invoke("export", str(scenario), "--to", "llamafactory",
                                           "-o", str(out))
    assert escaped is None and code == 0, stderr
    outside = _all_files(tmp_path) - _all_files(out) - {scenario}
    assert outside == set(), f"written outside -o: {outside}"
    folder = safe_component(second)
    assert (out / folder / "launch.sh").is_file() and (out / "a" / "launch.sh").is_file()
    assert f"saves/{folder}" in (out / folder / "train.yaml").read_text(encoding="utf-8")
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert f"`cd {folder}/`" in readme and "not a safe folder name" in readme
    assert "not a safe folder name" in stderr  # and said on the terminal


def test_export_refuses_a_symlink_in_its_folder_and_writes_nothing(tmp_path: Path) -> None:
    scenario = _two_jobs(tmp_path, "b")
    victim = tmp_path / "victim.sh"
    victim.write_text("precious\n", encoding="utf-8")
    out = tmp_path / "out"
    (out / "a").mkdir(parents=True)
    (out / "a" / "launch.sh").symlink_to(victim)
    code, _, stderr, escaped = invoke("export", str(scenario), "--to", "deepspeed", "-o", str(out))
    assert escaped is None and code == 2
    assert "symbolic link" in stderr and "nothing was written" in stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert _all_files(out) == {out / "a" / "launch.sh"}  # not a single file written beside it


def test_export_refuses_a_job_folder_that_is_a_symlink(tmp_path: Path) -> None:
    scenario = _two_jobs(tmp_path, "b")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "b").symlink_to(elsewhere, target_is_directory=True)
    code, _, stderr, escaped = invoke("export", str(scenario), "--to", "deepspeed", "-o", str(out))
    assert escaped is None and code == 2 and "symbolic link" in stderr
    assert list(elsewhere.iterdir()) == []


def test_export_refuses_to_overwrite_its_own_scenario(tmp_path: Path) -> None:
    data = copy.deepcopy(HOSTILE_BASE)
    scenario = tmp_path / "train.yaml"  # the name LLaMA-Factory's config is written under
    scenario.write_text(yaml.safe_dump(data), encoding="utf-8")
    before = scenario.read_bytes()
    code, _, stderr, escaped = invoke("export", str(scenario), "--to", "llamafactory",
                                      "-o", str(tmp_path))
    assert escaped is None and code == 2 and "inputs" in stderr
    assert scenario.read_bytes() == before and not (tmp_path / "launch.sh").exists()


def test_pareto_report_and_solve_refuse_their_input_as_output(tmp_path: Path) -> None:
    for name, args in (("s.json", ["pareto", "{s}", "-o", "{s}", "-q"]),
                       ("s.html", ["report", "{s}", "-o", "{s}"]),
                       ("t.html", ["solve", "{s}", "--report", "{s}"])):
        scenario = tmp_path / name
        scenario.write_text(json.dumps(HOSTILE_BASE), encoding="utf-8")  # JSON is YAML
        before = scenario.read_bytes()
        code, _, stderr, escaped = invoke(*[a.format(s=scenario) for a in args])
        assert escaped is None and code == 2 and "inputs" in stderr, (args, stderr)
        assert scenario.read_bytes() == before


def test_calibrate_refuses_its_inputs_as_output(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("iteration 1\n", encoding="utf-8")
    described = tmp_path / "run.yaml"
    described.write_text("model: llama3-8b\n", encoding="utf-8")
    overlay = tmp_path / "o.yaml"
    overlay.write_text("{}\n", encoding="utf-8")
    for args in (["-o", str(described)], ["--catalog", str(overlay), "-o", str(overlay)]):
        code, _, stderr, escaped = invoke("calibrate", str(log), *args)
        assert escaped is None and code == 2 and "inputs" in stderr, stderr
    assert described.read_text(encoding="utf-8") == "model: llama3-8b\n"
    assert overlay.read_text(encoding="utf-8") == "{}\n"


def test_a_symlinked_output_file_is_refused_before_the_work(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious", encoding="utf-8")
    link = tmp_path / "front.csv"
    link.symlink_to(victim)
    with pytest.raises(OutputRefused, match="symbolic link"):
        check_output_file(link)
    with pytest.raises(WriteFailed, match="symbolic link"):
        write_atomically(link, "x")  # the writer itself refuses too
    assert victim.read_text(encoding="utf-8") == "precious" and link.is_symlink()


def test_a_full_disk_part_way_leaves_no_new_file_and_no_temporary(tmp_path: Path,
                                                                   monkeypatch) -> None:
    real_fsync = os.fsync
    calls = []

    def fsync_then_full(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(atomic_file.os, "fsync", fsync_then_full)
    old = tmp_path / "old.txt"
    old.write_text("old", encoding="utf-8")
    files = [(tmp_path / f"f{i}.txt", f"data {i}", None) for i in range(4)] + [(old, "new", None)]
    with pytest.raises(WriteFailed) as caught:
        write_all(files)
    assert str(caught.value) == f"{tmp_path / 'f2.txt'}: cannot write: no space left on the device"
    assert caught.value.errno == errno.ENOSPC and isinstance(caught.value, OSError)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.txt"]
    assert old.read_text(encoding="utf-8") == "old"


def test_export_on_a_full_disk_is_one_line_and_not_success(tmp_path: Path, monkeypatch) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_file.os, "fsync", full)
    scenario = _two_jobs(tmp_path, "b")
    out = tmp_path / "out"
    code, stdout, stderr, escaped = invoke("export", str(scenario), "--to", "deepspeed",
                                           "-o", str(out))
    assert escaped is None and code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "no space left" in lines[0] and "nothing was written" in lines[0]
    assert "Traceback" not in stderr and stdout == "" and not out.exists()


def test_ctrl_c_inside_a_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic_file.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(tmp_path / "r.csv", "x")
    assert list(tmp_path.iterdir()) == []


def test_sigterm_inside_a_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    script = (  # SIGTERM lands while the temporary file is open; the process ends by it, as usual
        "import os, signal, sys\nfrom pathlib import Path\nfrom plan.planner import "
        "atomic_file\ndef fsync(fd):\n    os.kill(os.getpid(), "
        "signal.SIGTERM)\natomic_file.os.fsync = "
        "fsync\natomic_file.write_atomically(Path(sys.argv[1]) / 'r.csv', 'x' * "
        "100000)\nprint('not reached')\n")
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                          text=True, timeout=60, cwd=REPO)
    assert proc.returncode == -signal.SIGTERM and "not reached" not in proc.stdout
    assert list(tmp_path.iterdir()) == []


def _with_file_size_limit(limit_bytes: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return limit


@pytest.mark.parametrize("args", [["pareto", "{s}", "-o", "{d}/front.csv", "-q"],
                                  ["export", "{s}", "--to", "deepspeed", "-o", "{d}/out"],
                                  ["report", "{s}", "-o", "{d}/r.html"]])
def test_a_file_size_limit_is_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    scenario = _two_jobs(tmp_path, "b")
    argv = [a.format(s=scenario, d=tmp_path) for a in args]
    proc = subprocess.run([*PLAN, *argv], capture_output=True, text=True, timeout=300, cwd=REPO,
                          preexec_fn=_with_file_size_limit(300))  # Python ignores SIGXFSZ: EFBIG
    assert proc.returncode == 2, proc.stderr
    assert "file too large" in proc.stderr and "Traceback" not in proc.stderr
    assert len([line for line in proc.stderr.splitlines() if line.startswith("error:")]) == 1
    assert _no_temporary_files(tmp_path)
    assert not (tmp_path / "front.csv").exists() and not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder: EACCES "
                    "cannot be provoked this way (the monkeypatched test covers it)")
def test_a_read_only_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    scenario = _two_jobs(tmp_path, "b")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        code, _, stderr, escaped = invoke("pareto", str(scenario), "-o", str(folder / "f.csv"),
                                          "-q")
    finally:
        folder.chmod(0o755)
    assert escaped is None and code == 2 and "permission denied" in stderr
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("code, words", [(errno.EACCES, "permission denied"),
                                         (errno.EROFS, "read-only file system"),
                                         (errno.EMFILE, "too many open files")])
def test_os_errors_become_one_line_naming_the_path(tmp_path: Path, monkeypatch, code: int,
                                                   words: str) -> None:
    def refused(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(atomic_file.tempfile, "mkstemp", refused)
    scenario = _two_jobs(tmp_path, "b")
    target = tmp_path / "f.csv"
    exit_code, _, stderr, escaped = invoke("pareto", str(scenario), "-o", str(target), "-q")
    assert escaped is None and exit_code == 2
    assert f"error: {target}: cannot write: {words}" in stderr and "Traceback" not in stderr


def _main_ending_in(raised: str) -> subprocess.CompletedProcess[str]:
    """`plan validate` whose command raises `raised` (Python source), as the user sees it."""
    script = ("import sys\n"
              "from plan.planner.cli import app\ndef broken():\n    raise "
              f"{raised}\napp.COMMANDS['validate'] = ('__main__', 'broken')\nsys.argv = ['plan', "
              "'validate']\napp.main()\n")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


def test_file_descriptor_exhaustion_is_not_an_interrupt() -> None:
    emfile = "OSError(24, 'Too many open files', '/some/file')"
    for raised in (emfile, "EOFError()"):
        proc = _main_ending_in(raised)
        assert proc.returncode != 130 and "interrupted" not in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    proc = _main_ending_in(emfile)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        "error: /some/file: too many open files (raise `ulimit -n`)")


@pytest.mark.parametrize("text, shown", [
    ("plain text", "plain text"), ("a\x1b[2Jb", "a\\x1b[2Jb"), ("two\nlines", "two\\nlines"),
    ("txt\u202eexe", "txt\\u202eexe"), ("\u2066iso\u2069", "\\u2066iso\\u2069"),
    ("del\x7f", "del\\x7f"), ("c1\x9b31m", "c1\\x9b31m"), ("tab\there", "tab\\there"),
    ("ünïcode 中文", "ünïcode 中文")])
def test_plain_text_escapes_what_acts_on_a_terminal(text: str, shown: str) -> None:
    assert plain(text) == shown
    assert plain(plain(text)) == shown  # escaping is idempotent on its own output


def test_input_text_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    data = {**copy.deepcopy(HOSTILE_BASE), "name": "evil\u202eTXT\nforged line"}
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    for args in (["solve", str(scenario)], ["pareto", str(scenario), "-q"]):
        code, stdout, _, escaped = invoke(*args)
        assert escaped is None and code == 0
        assert "\u202e" not in stdout and "evil\\u202eTXT\\nforged line" in stdout
    bad_path = tmp_path / "x\x1b[2Jy\nz.yaml"
    code, _, stderr, _ = invoke("solve", str(bad_path))
    assert code == 2 and "\x1b" not in stderr and len(stderr.strip().splitlines()) == 1


def test_json_answers_keep_bidi_marks_as_escapes(tmp_path: Path) -> None:
    """`--format json` writes a bidi override from input as the JSON escape \\u202e: the same
    value to a JSON reader, inert on a terminal; Chinese stays as written."""
    import json

    import yaml
    from typer.testing import CliRunner

    from plan.planner.cli.app import app
    from tests.conftest import REPO

    data = yaml.safe_load((REPO / "scenarios/student_no_ops.yaml").read_text(encoding="utf-8"))
    data["name"] = "实验室\u202eTXT.exe"
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    result = CliRunner().invoke(app, ["solve", str(scenario), "--format", "json"])
    assert result.exit_code == 0 and "\u202e" not in result.stdout
    assert "实验室\\u202eTXT.exe" in result.stdout
    assert json.loads(result.stdout)["scenario"] == "实验室\u202eTXT.exe"
