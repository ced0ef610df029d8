"""Progress where stderr is a log (#50 item 7): plain lines at a steady interval instead of bars, which a file
keeps as carriage returns; the run folders printed at the end and in ``--json``."""

from __future__ import annotations

import io
import json
import re
import time

import pytest

from metabench import progress


@pytest.fixture
def fast(monkeypatch):
    """A progress line every 10 ms (below the 1 s floor a user may set: lowered for the test)."""
    monkeypatch.setattr(progress, "MIN_INTERVAL", 0.001)
    monkeypatch.setenv("METABENCH_PROGRESS_INTERVAL", "0.01")


def test_the_default_style_is_bars_on_a_terminal_and_lines_elsewhere(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stderr", Terminal())
    assert progress.style(True) == "bars"
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert progress.style(True) == "lines"
    assert progress.style(False) == "off" and progress.style("bars") == "bars" and progress.style("lines") == "lines"


def test_a_phase_prints_a_line_per_interval_with_its_scope_counts_and_eta_then_a_closing_line(fast, capsys):
    with progress.run_style("lines"), progress.scope("job 2/3 | toy_cls | lookup"):
        with progress.meter(20, "predict seed 0", "item") as bar:
            for _ in range(20):
                time.sleep(0.005)
                bar.update(1)
            time.sleep(0.03)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 3 and "\r" not in "".join(lines) and "\x1b[" not in "".join(lines)
    running = [line for line in lines if "done" not in line]
    assert running and all(re.fullmatch(r"\[\d\d:\d\d:\d\d\] job 2/3 \| toy_cls \| lookup \| predict seed 0: "
                                        r"\d+/20 items \(\d+ %\), \d+s elapsed(, ETA \d+s)?", line) for line in running), lines
    assert any("ETA" in line for line in running)
    assert re.fullmatch(r"\[\d\d:\d\d:\d\d\] job 2/3 \| toy_cls \| lookup \| predict seed 0: done, 20/20 items "
                        r"\(100 %\), in \d+s", lines[-1]), lines[-1]


def test_a_phase_shorter_than_the_interval_prints_nothing(capsys):
    with progress.run_style("lines"), progress.meter(5, "predict seed 0", "item") as bar:
        bar.update(5)
    assert capsys.readouterr().err == ""


def test_the_innermost_phase_is_shown_and_the_outer_one_names_the_job_in_between(fast, capsys):
    with progress.run_style("lines"), progress.meter(2, "run", "job") as jobs:
        with progress.scope("job 1/2 | toy_tag | majority"):
            time.sleep(0.03)  # loading: only the run's phase is open
            with progress.meter(4, "fine-tune model seed 0", "step") as steps:
                steps.set_postfix(epoch="1/2", loss="0.5000", examples=16)
                time.sleep(0.03)
        jobs.update(1)
    err = capsys.readouterr().err
    assert re.search(r"run: 0/2 jobs \(0 %\), \d+s elapsed; now job 1/2 \| toy_tag \| majority", err), err
    assert re.search(r"job 1/2 \| toy_tag \| majority \| fine-tune model seed 0: 0/4 steps \(0 %\), epoch 1/2, "
                     r"loss 0.5000, examples 16, \d+s elapsed", err), err
    assert "run: done, 1/2 jobs" in err  # the run was open while lines were printed: it says it ended


def test_off_and_outside_a_run_nothing_is_printed(fast, capsys):
    for style in ("off", None):
        with progress.run_style(style) if style else progress.scope("no run"):
            with progress.meter(3, "predict", "item") as bar:
                time.sleep(0.03)
                bar.update(3)
    assert capsys.readouterr().err == ""


def test_a_run_into_a_log_prints_lines_and_its_run_folders(toy_env, tmp_path):
    """The CLI with stderr a file: progress lines, no bar; the run folders at the end, as `compare` takes them;
    the same folders in --json."""
    import subprocess
    import sys

    env = {**toy_env, "METABENCH_PROGRESS_INTERVAL": "0.002"}
    log = tmp_path / "log.txt"
    with log.open("w") as err:
        fast_cli = ("import sys; from metabench import progress; progress.MIN_INTERVAL = 0.001; "  # below the floor
                    "from metabench.cli import main; sys.exit(main())")
        done = subprocess.run([sys.executable, "-c", fast_cli, "--tasks", "toy_cls", "--model", "majority",
                               "--model", "lookup", "--launcher", "serial", "--limit", "30", "-o", "out"],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=err, text=True, env=env, timeout=120)
    assert done.returncode == 0, log.read_text()
    text = log.read_text()
    assert "\r" not in text and "it/s" not in text and re.search(r"\] run: \d/2 jobs", text), text
    folders = done.stdout.split("run folders (metabench compare / explore take them):\n")[1].split("\n\n")[0]
    assert folders.split() == ["out/toy_cls/majority@limit=30", "out/toy_cls/lookup@limit=30"]
    closing = done.stdout.strip().splitlines()[-2:]  # what the run cost, then the count line
    assert re.fullmatch(r"time: \d+s wall for the run; \d+ CPU-s for the command \(user \+ system, workers included\)",
                        closing[0]), closing
    assert closing[1] == "2 ok · 0 skipped · 0 failed"
    assert all((tmp_path / folder / "results.json").is_file() for folder in folders.split())
    as_json = subprocess.run([sys.executable, "-m", "metabench.cli", "--tasks", "toy_cls", "--model", "majority",
                              "--limit", "30", "-o", "out", "--json", "--no-progress"],
                             cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert as_json.returncode == 0 and as_json.stderr == "", as_json.stderr
    report = json.loads(as_json.stdout)
    (job,) = report["jobs"]
    assert job["status"] == "ok" and job["run_dir"] == "out/toy_cls/majority@limit=30" and job["partial"] is True
    assert report["run_dirs"] == [job["run_dir"]] and job["metrics"]["accuracy"]["n"] == 1
    assert report["summary"] == "1 ok · 0 skipped · 0 failed" and report["cpu_s"] > 0 and report["wall_s"] >= 0
