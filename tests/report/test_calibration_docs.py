"""The calibration figures in docs/reporting.md come from `metabench stats calibrate --write`, never typed: the
committed record must be what the command computes from today's code and runs (the docs tables themselves are
held to the record by test_docs_tables)."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

from metabench.report.calibration import RECORD, Settings, fingerprint, misses, run
from metabench.report.calibration_misses import MISSES
from metabench.report.docs.blocks import find_blocks
from metabench.stats.calibrate import Row

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "leaderboard" / "runs"


def _record() -> dict:
    return json.loads((ROOT / RECORD).read_text(encoding="utf-8"))


def test_the_calibration_record_is_current():
    """A change to the simulation, the statistics it calls, the gate or the runs it reads makes the record stale."""
    record = _record()
    assert fingerprint(RUNS, Settings(**record["settings"])) == record["fingerprint"], (
        "benchmarks/results/calibration.json is stale: run `metabench stats calibrate --write && metabench report docs`")


def test_the_committed_misses_are_the_records():
    """compare, gate and the leaderboard read the misses from the package: the same command writes them."""
    assert json.loads(MISSES.read_text(encoding="utf-8")) == misses(_record()), (
        "metabench/report/calibration_misses.json is stale: run `metabench stats calibrate --write`")


def test_a_changed_setting_changes_the_fingerprint():
    assert fingerprint(RUNS, Settings()) != fingerprint(RUNS, Settings(seed=1))


def test_reporting_md_shows_both_generated_tables():
    text = (ROOT / "docs" / "reporting.md").read_text(encoding="utf-8")
    names = {block.name for block in find_blocks(Path("reporting.md"), text)}
    assert {"calibration", "gate-false-fails"} <= names


def test_each_rows_missed_targets_follow_from_its_rates():
    for entry in _record()["rows"]:
        row = Row(**{k: entry[k] for k in ("procedure", "shape", "replications", "type_i", "coverage_null",
                                           "coverage_alt", "mde", "power", "note", "se")})
        assert row.verdicts() == entry["missed"], entry["procedure"]


#: the shapes read from two seeds of one recipe: (task pattern, run folder) as task_shapes reads them
SEEDED = ("MOH_X", "MUNCH", "VUA18", "M4X")


def _pairs_offered() -> dict[str, set[str]]:
    """task pattern -> every pair of the seeds its committed run holds ("0/1" ... "3/4"), read from the run folders
    here, not from task_shapes' choice."""
    import itertools

    from metabench.report import task_shapes
    from metabench.runs.stored import find_runs

    out = {}
    for name in SEEDED:
        pattern, folder = getattr(task_shapes, name)
        runs = find_runs(sorted(RUNS.glob(f"{pattern}/{folder}")))
        seeds = sorted({seed for run in runs for seed in run.record.seeds})
        assert folder != "hf_minilm-l6" or len(seeds) == 5, f"{pattern}/{folder}: not the protocol's five seeds"
        out[pattern] = {f"{x}/{y}" for x, y in itertools.combinations(seeds, 2)}
    return out


def test_every_seed_pair_of_the_committed_runs_is_simulated():
    """Issue 48 item 6: VUA-18's cluster bootstrap was calibrated on seeds 0/1 alone, the pair that suited it; issue
    58 item 12: then on the pairs of the first three seeds, while the sentence bootstrap's worst pair was 0/3.
    Every pair of the seeds the committed runs hold is a population of its own, and the record has every
    procedure's row for each: a simulation of fewer pairs than the runs offer fails here, in the shapes and in the
    record."""
    from metabench.report import task_shapes

    offered = _pairs_offered()
    assert [len(offered[getattr(task_shapes, name)[0]]) for name in ("MOH_X", "VUA18", "M4X")] == [10, 10, 10]
    simulated: dict[tuple[str, str], set[str]] = {}
    for population in _populations():
        simulated.setdefault((population.tasks, population.task), set()).add("/".join(map(str, population.seeds)))
    assert {tasks for tasks, _ in simulated} == set(offered)
    for (tasks, shape), pairs in simulated.items():
        assert pairs == offered[tasks], f"{shape}: simulated on seeds {sorted(pairs)} of {sorted(offered[tasks])}"
    recorded: dict[tuple[str, str], set[str]] = {}
    for row in _record()["rows"]:
        if row.get("seeds"):
            recorded.setdefault((row["procedure"], row["shape"]), set()).add(row["seeds"])
    assert {shape for _, shape in recorded} >= {f"{p.task} ({p.size} {p.unit})" for p in _populations()}
    for (procedure, shape), pairs in recorded.items():
        tasks = next(t for t, s in simulated if shape.startswith(s + " ("))
        assert pairs == offered[tasks], f"{procedure} on {shape}: the record has seeds {sorted(pairs)} only"


def test_the_gate_counts_are_its_recorded_exit_statuses():
    """The replay check below replays the first gates of each scenario and holds them to the recorded exit
    statuses; the counts the docs print must be those statuses summed, every gate of them."""
    for entry in _record()["gate"]:
        codes = entry["codes"].split()
        assert len(codes) == entry["replays"], entry["scenario"]
        assert entry["false_fails"] == sum(c[0] == "1" for c in codes), entry["scenario"]
        assert entry["inconclusive"] == sum(c[0] == "3" for c in codes), entry["scenario"]
        assert entry["false_fails_before"] == sum(c[1] == "1" for c in codes), entry["scenario"]


def test_a_miss_on_any_seed_pair_is_listed():
    """The misses compare, gate and the leaderboard print name every pair a default procedure misses on."""
    record = _record()
    for entry in record["rows"]:
        if entry.get("scope") and entry["missed"] and entry.get("seeds"):
            miss, = [m for m in misses(record)["misses"]
                     if m["procedure"] == entry["procedure"] and m["shape"] == entry["shape"]]
            assert f"seeds {entry['seeds']} (" in miss["figures"]


@pytest.mark.slow
def test_the_command_prints_every_procedure_and_the_gate(cli):
    code, out, _ = cli("stats", "calibrate", "--runs", RUNS, "--replications", "4", "--resamples", "40",
                       "--gate-replays", "2")
    assert code == 0
    for name in ("McNemar exact", "bootstrap over documents, t(K-1) (default)", "paired t over seeds", "Holm",
                 "order noise, 5 seeds (paired t)", "identical candidate"):
        assert name in out


#: The committed runs' task shapes the simulation reads (task_shapes.populations), one per shape and seed pair: MOH-X
#: accuracy and F1, VUA-18 and Meta4XNLI (ten pairs each, of five seeds), MUNCH at 100 items and in full (three
#: pairs each, of three seeds). One part of the replay each.
POPULATIONS = 46
#: The record, in parts: each part draws from its own generator, seeded by the settings, as run() does, so a part
#: computed alone is that part of the whole record.
PARTS = [f"population {i}" for i in range(POPULATIONS)] + ["seeds", "corrections", "gate"]
#: Which seed pairs the replay check recomputes: by default one pair of each shape (the pair chosen by the record's
#: fingerprint, so a session checks the same pairs every time until the record changes, and a new record checks
#: other pairs), and the first GATES gates of each scenario; "all" recomputes every part in full (minutes: run
#: it after `metabench stats calibrate --write`).
CHECK = os.environ.get("METABENCH_CALIBRATION_CHECK", "")
GATES = 20


@functools.cache
def _populations() -> tuple:
    """task_shapes.populations of the committed runs, read once per test process (46 parts read them)."""
    from metabench.report import task_shapes

    return tuple(task_shapes.populations(RUNS))


def _part(registry, part: str, settings: Settings) -> tuple[str, list[dict]]:
    """(the record's list the part belongs to, its entries) for one part of run()'s record."""
    import tempfile

    from metabench.report import task_shapes
    from metabench.report.gate import replay as gate_replay
    from metabench.stats import calibrate

    if part.startswith("population "):
        population = _populations()[int(part.split()[1])]
        rows = calibrate.calibrate_population(population, replications=settings.replications,
                                              resamples=settings.resamples, seed=settings.seed)
    elif part == "seeds":
        rows = [row for shape in task_shapes.seed_shapes(RUNS)
                for row in calibrate.calibrate_seeds(shape, replications=settings.seed_replications,
                                                     seed=settings.seed)]
    elif part == "corrections":
        rows = calibrate.calibrate_corrections(task_shapes.family_size(RUNS),
                                               replications=settings.correction_replications, seed=settings.seed)
    else:
        with tempfile.TemporaryDirectory(prefix="metabench-gate-replay-") as work:
            replays = gate_replay.replay(registry, RUNS, Path(work), replays=settings.gate_replays, seed=settings.seed)
        return "gate", [r.as_dict() for r in replays]
    return "rows", [row.as_dict() for row in rows]


def _checked(population_tasks: list[str], shape: str, fingerprint: str) -> list[int]:
    """The positions in task_shapes.populations of the pairs of ``shape`` the replay check recomputes (`CHECK`)."""
    positions = [i for i, task in enumerate(population_tasks) if task == shape]
    if CHECK == "all":
        return positions
    return [positions[(int(fingerprint[:12], 16) + SHAPES.index(shape)) % len(positions)]]


#: the shapes (task_shapes.populations' task names), in their order
SHAPES = ["moh_x_cv fold", "moh_x_cv fold F1", "munch_sent_judge_msent_p1@limit", "munch_sent_judge_msent_p1",
          "vua18_seq token_f1", "m4x_det_en_mono span_f1"]


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.parametrize("part", [*SHAPES, "seeds", "corrections"])
def test_the_record_is_what_the_command_computes(report_registry, part):
    """Every part of the simulation is computed again with the record's settings and must be the record's, figure
    for figure: for a task shape, one of its seed pairs at a time (`CHECK`: each pair is its own stream, so one
    pair recomputed alone is that pair's rows of the whole record); the paired t's and the corrections whole."""
    record = _record()
    settings = Settings(**record["settings"])
    parts = [part]
    if part in SHAPES:
        tasks = [population.task for population in _populations()]
        assert part in tasks, f"{part}: no longer a shape of the committed runs; update SHAPES"
        parts = [f"population {i}" for i in _checked(tasks, part, record["fingerprint"])]
    for one in parts:
        where, entries = _part(report_registry, one, settings)
        found = [i for i in range(len(record[where]) - len(entries) + 1)
                 if record[where][i:i + len(entries)] == entries]
        seeds = entries[0].get("seeds") if entries else None
        assert entries and found, f"{part} (seeds {seeds}): the record's figures are not what the simulation computes"


@pytest.mark.slow
@pytest.mark.heavy
def test_the_gate_replay_is_what_the_command_computes(report_registry):
    """The gate's null replays again with the record's seed: the first `GATES` gates of each scenario (its draws are
    one stream, so they are the first of the record's 200) and every identical-candidate gate must exit as the
    record says; test_the_gate_counts_are_its_recorded_exit_statuses holds the counts to those statuses."""
    import tempfile

    from metabench.report.gate import replay as gate_replay

    record = _record()
    replays = record["settings"]["gate_replays"] if CHECK == "all" else GATES
    with tempfile.TemporaryDirectory(prefix="metabench-gate-replay-") as work:
        again = gate_replay.replay(report_registry, RUNS, Path(work), replays=replays, seed=record["settings"]["seed"])
    assert [r.scenario for r in again] == [r["scenario"] for r in record["gate"]]
    for replayed, recorded in zip(again, record["gate"]):
        assert list(replayed.codes) == recorded["codes"].split()[:len(replayed.codes)], replayed.scenario


@pytest.mark.slow
def test_the_record_has_the_parts_and_only_them(report_registry):
    """The parts the test above replays are the record's whole layout: run() with a few replications gives the
    same procedures, shapes and scenarios in the same order, and its fingerprint and settings are the record's."""
    record = _record()
    populations = _populations()
    assert len(populations) == POPULATIONS, "update POPULATIONS to the committed runs' shapes"
    assert list(dict.fromkeys(p.task for p in populations)) == SHAPES, "update SHAPES to the committed runs' shapes"
    small = Settings(replications=4, resamples=40, gate_replays=2, correction_replications=40, seed_replications=40,
                     seed=record["settings"]["seed"])
    cheap = run(report_registry, RUNS, small)
    layout = lambda rows: [(r["procedure"], r["shape"], r.get("seeds")) for r in rows]  # noqa: E731
    assert layout(cheap["rows"]) == layout(record["rows"])
    assert [r["scenario"] for r in cheap["gate"]] == [r["scenario"] for r in record["gate"]]
    assert set(record) == set(cheap) and record["fingerprint"] == fingerprint(RUNS, Settings(**record["settings"]))
    parts = [_part(report_registry, part, small) for part in PARTS]
    assert [r for where, entries in parts if where == "rows" for r in entries] == cheap["rows"]
    assert [r for where, entries in parts if where == "gate" for r in entries] == cheap["gate"]
