"""`--dry-run`: the plan and its cost from the task files, the model's class and the datasets' declared counts —
no model loaded, no data read, nothing written; a big run from a terminal asks for --yes."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from metabench.cli import main
from mirror import mirror_dir

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from metabench.cli import main
code = main(sys.argv[1:])
heavy = sorted(m for m in ("torch", "transformers", "datasets", "ray", "lm_eval") if m in sys.modules)
print("HEAVY:" + ",".join(heavy))
sys.exit(code)
"""


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*")) if folder.exists() else []


@pytest.mark.slow
def test_a_dry_run_loads_no_model_reads_no_data_and_writes_nothing(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "runs"
    cache.mkdir()
    env = {**os.environ, "METABENCH_CACHE_DIR": str(cache), "METABENCH_DATA_DIR": str(tmp_path / "no-data"),
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, "--tasks", "core", "--model", "hf:minilm-l6", "--dry-run",
                           "-o", str(out)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "HEAVY:\n" in done.stdout  # neither torch nor transformers (nor datasets, ray, lm_eval) imported
    assert _files(cache) == [] and not out.exists()  # no model built, no answer cache, no run folder
    # the data mirror does not exist, and the plan is still made: no data file was read
    row = next(line for line in done.stdout.splitlines() if line.startswith("vua18_seq "))
    assert row.split()[2:4] == ["run", "5"] and "5 × 3 × 6,323" in row and "94,845" in row  # 5 seeds × 3 epochs × 6,323
    assert "skipped (no protocol.encoder in the task): 17 job(s): m4x_det_prompted_marked_en" in done.stdout


def test_the_cost_adds_up_the_jobs():
    from metabench.dry_run import PlannedJob, RunPlan, cost_lines

    jobs = [PlannedJob("a", "m", "run", seeds=2, epochs=3, train_items=100, validation_items=10, test_items=50, max_length=8),
            PlannedJob("b", "m", "run", seeds=1, epochs=2, train_items=None, test_items=5, max_length=8),
            PlannedJob("c", "m", "done", seeds=5, epochs=3, train_items=100, test_items=5),
            PlannedJob("d", "m", "skipped", reason="cannot answer GenerateRequest")]
    assert [j.fine_tunes for j in jobs] == [2, 1, 0, 0]
    assert jobs[0].training_examples == 600 and jobs[0].forward_items == 600 + 60 + 100 and jobs[0].token_bound == 760 * 8
    assert jobs[1].training_examples is None and jobs[2].training_examples == 0
    line = cost_lines(RunPlan(jobs, {}))[0]
    assert line.startswith("cost: 3 fine-tune(s); 600 training examples") and "plus 1 job(s)" in line


def _status(out: str, task: str) -> str:
    return next(line.split()[2] for line in out.splitlines() if line.startswith(task + " "))


def _baseline_run(tmp_path, monkeypatch, *extra):
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return main(["--tasks", "moh_x_cv_fold3,m4x_nli_zs_en_xnli_test_met", "--model", "majority", "-o",
                 str(tmp_path / "runs"), "--launcher", "serial", "--no-progress", *extra])


@pytest.mark.slow
@pytest.mark.skipif(mirror_dir() is None, reason="needs the data mirror (METABENCH_DATA_DIR or ../shared/data)")
def test_a_finished_job_is_planned_as_done(tmp_path, monkeypatch, capsys):
    assert _baseline_run(tmp_path, monkeypatch, "--dry-run") == 0
    before = capsys.readouterr().out
    assert _status(before, "moh_x_cv_fold3") == "run" and "skipped (cannot answer GenerateRequest): 1 job(s)" in before
    assert _baseline_run(tmp_path, monkeypatch) == 0
    capsys.readouterr()
    assert _baseline_run(tmp_path, monkeypatch, "--dry-run") == 0
    after = capsys.readouterr().out
    assert _status(after, "moh_x_cv_fold3") == "done" and "0 to run (0 fine-tune(s)), 1 done already" in after
    (tmp_path / "runs" / "moh_x_cv_fold3" / "majority" / "results.json").unlink()
    assert _baseline_run(tmp_path, monkeypatch, "--dry-run") == 0  # the answer cache still remembers it
    assert "1 done already" in capsys.readouterr().out
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "other-cache"))
    assert main(["--tasks", "moh_x_cv_fold3", "--model", "majority", "-o", str(tmp_path / "runs"), "--dry-run"]) == 0
    assert "1 to run" in capsys.readouterr().out and not (tmp_path / "other-cache").exists()


@pytest.fixture
def started(monkeypatch, tmp_path):
    """The runs the CLI starts (``metabench.evaluate`` replaced by a recorder that starts nothing)."""
    import metabench.api
    from metabench.errors import MetabenchError

    calls = []

    def evaluate(**arguments):
        calls.append(arguments["tasks"])
        raise MetabenchError("recorded, not run")

    monkeypatch.setattr(metabench.api, "evaluate", evaluate)
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return calls


@pytest.mark.slow
def test_many_fine_tunes_from_a_terminal_need_yes(monkeypatch, capsys, tmp_path, started):
    for stream in (sys.stdin, sys.stderr):
        monkeypatch.setattr(stream, "isatty", lambda: True, raising=False)
    code = main(["--tasks", "core", "--model", "hf:minilm-l6", "-o", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and started == []
    assert "this run fine-tunes more than 20 models" in err and "cost: 156 fine-tune(s)" in err and "add --yes" in err
    main(["--tasks", "core", "--model", "hf:minilm-l6", "-o", str(tmp_path / "runs"), "--yes"])
    main(["--tasks", "vua18_seq", "--model", "hf:minilm-l6", "-o", str(tmp_path / "runs")])  # 5 fine-tunes: no question
    assert started == ["core", "vua18_seq"] and not (tmp_path / "runs").exists()


def test_no_terminal_starts_without_asking(monkeypatch, tmp_path, started):
    import metabench.dry_run

    monkeypatch.setattr(metabench.dry_run, "plan_run", lambda **kw: pytest.fail("planned without a terminal"))
    main(["--tasks", "core", "--model", "hf:minilm-l6", "-o", str(tmp_path / "runs")])  # stdin under pytest is no terminal
    assert started == ["core"]


def test_the_rate_is_measured_on_each_fine_tune_of_the_same_model_once(tmp_path):
    from metabench.dry_run import measured_rate
    from metabench.models.spec import parse_model_spec

    def run(task, spec, n_train, checkpoints, slug=None):
        folder = tmp_path / task / (slug or parse_model_spec(spec).slug)
        folder.mkdir(parents=True)
        args = dict(a.split("=") for a in spec.split(":", 1)[1].split(",")[1:]) if "," in spec else {}
        record = copy.deepcopy(committed)  # a whole record (the plan reads records, not fragments), changed
        record["model"] = {"spec": spec, "args": args, "info": {"checkpoints": checkpoints}}
        record["data"] = {"splits": {"train": {"n": n_train, "ids_sha256": "0" * 64}}}
        (folder / "results.json").write_text(json.dumps(record), encoding="utf-8")

    from metabench.store import COMMITTED_RUNS, read_record, run_folders

    committed = read_record(run_folders(Path(__file__).resolve().parents[2] / COMMITTED_RUNS)[0]).raw

    epoch = {"epoch": 1}
    trained = {"key": "k0", "fit_s": 30.0, "history": [epoch] * 3}
    loaded = {"key": "k1", "fit_s": 20.0, "cached": True, "load_s": 1.0, "history": [epoch] * 3}  # its training's record
    run("a", "hf:m", 100, {"0": trained, "1": loaded})
    run("a2", "hf:m", 100, {"0": {**trained, "cached": True, "load_s": 1.0}})  # the same checkpoint again: counted once
    run("b", "hf:m", 50, {"0": {"fit_s": 10.0, "history": [epoch] * 2}})
    run("c", "hf:m,max_train=10", 50, {"0": {"fit_s": 5.0, "history": [epoch]}})
    (tmp_path / "d" / "hf_m").mkdir(parents=True)
    (tmp_path / "d" / "hf_m" / "results.json").write_text("{not json", encoding="utf-8")  # unreadable: not counted
    rate = measured_rate(tmp_path, parse_model_spec("hf:m"))
    assert rate.fine_tunes == 3 and rate.seconds_per_example == pytest.approx(60.0 / (300 + 300 + 100))
    capped = measured_rate(tmp_path, parse_model_spec("hf:m,max_train=10"))
    assert capped.fine_tunes == 1 and capped.seconds_per_example == pytest.approx(5.0 / 10)
    assert measured_rate(tmp_path, parse_model_spec("hf:other")) is None


@pytest.mark.slow
def test_the_plan_of_all_names_the_tasks_it_leaves_out(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--tasks", "all", "--model", "majority", "--dry-run", "-o", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("left out of all:"))
    assert line.startswith("left out of all: 7 task(s) whose data was built for one model") and "hard_mi_minilm_l6_xi05" in line
    assert "hard_mi_minilm_l6 " not in out.split("left out of all")[0]
    assert main(["--tasks", "hard", "--model", "majority", "--dry-run", "-o", str(tmp_path / "runs")]) == 0
    assert "left out of all" not in capsys.readouterr().out


@pytest.mark.slow
def test_a_fresh_folder_plans_from_the_committed_runs_and_says_why_a_number_is_unknown(tmp_path, monkeypatch, capsys):
    """From the repository root a fresh output folder's plan takes undeclared split sizes and the fine-tuning speed
    from the committed runs, naming them; elsewhere each `?` is explained and the missing estimate said."""
    task = "boisson_moh_lexical_f0@default"  # its folds declare no counts: only a finished run knows them
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    args = ["--tasks", task, "--model", "hf:minilm-l6", "--model", "majority", "--dry-run", "-o", str(tmp_path / "runs")]
    committed = next((ROOT / "leaderboard" / "runs" / task).glob("*/results.json"))  # any model's run records it
    train = json.loads(committed.read_text())["data"]["splits"]["train"]["n"]

    monkeypatch.chdir(ROOT)
    assert main(args) == 0
    out = capsys.readouterr().out
    rows = {line.split()[1]: line for line in out.splitlines() if line.startswith(task + " ")}
    assert f"× {train:,}" in rows["hf:minilm-l6"] and "?" not in out
    assert rows["majority"].split()[-1] == "—"  # a baseline reads no tokens worth bounding
    assert "fine-tune(s) of hf:minilm-l6 in leaderboard/runs, on the machine(s) that ran them" in out

    monkeypatch.chdir(tmp_path)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "?: 2 job(s) whose split sizes are unknown until the data is read" in out
    assert f"no finished run of the task in {tmp_path / 'runs'}/ records one" in out
    assert "no time estimate for hf:minilm-l6: no finished fine-tune of it in" in out
