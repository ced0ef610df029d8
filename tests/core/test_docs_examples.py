"""Every shell and Python example in README.md and docs/*.md runs as written, or is skipped for a stated reason
(#39 item 3).

Each fenced ```bash / ```sh / ```shell / ```console / ```python block is named by its page and its first line.
A block is either in ``RUN`` (run verbatim here), in ``ELSEWHERE`` (run verbatim by another test, named), or in
``SKIP`` with the reason it cannot run in a test (a GPU, a model hub, a Ray cluster, a long training, a
placeholder name). A new block in none of them fails the suite, as does an entry whose block is gone: a docs
example is run or consciously skipped, never forgotten.

A block runs from a fresh folder laid out like a clone (the venv, the committed runs and plugins linked in,
``../shared/data`` pointing at the mirror), with ``.venv/bin`` on PATH as after ``source .venv/bin/activate``,
the session's cache and no downloads; what it writes stays in that folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(bash|sh|shell|console|python)\n(.*?)^```", re.S | re.M)
#: What a block may read from the clone: linked, never copied (the blocks that write into them are skipped).
LINKED = (".venv", "leaderboard", "plugins", "examples", "tasks")

#: Blocks run verbatim here; the slow ones (minutes: a fine-tune) carry the marker.
RUN = {
    'README.md: source .venv/bin/activate': [pytest.mark.slow, pytest.mark.heavy],  # fine-tunes MiniLM (minutes)
    'docs/exporting.md: metabench export hf-eval-results leaderboard/runs/m4x_det_en': None,
    'docs/paraphrase-controls.md: metabench compare paired-variants --controls leaderboard/run': None,
    'docs/plugins.md: from pathlib import Path': None,
    'docs/plugins.md: counts={': None,
    'docs/plugins.md: from metabench.plugin_api import expect': None,
    'docs/plugins.md: import numpy as np': None,
    'docs/plugins.md: from metabench.plugin_api import Analysis, hookimpl': None,
    'docs/plugins.md: export PYTHONPATH="$PWD/plugins/metabench-example-plugin" ME': None,
    'docs/reporting.md: metabench explore leaderboard/runs/m4x_det_en_mono/lookup': None,
}
#: Blocks another test runs verbatim, checking more than the exit status.
ELSEWHERE = {
    'docs/python-api.md: source .venv/bin/activate': "tests/core/test_python_api.py::test_the_python_api_page_example_runs",
    'docs/python-api.md: import metabench': "tests/core/test_python_api.py::test_the_python_api_page_example_runs",
    'docs/reporting.md: metabench --tasks m4x_det_en_mono_vua20 --model lookup --see':
        "tests/report/test_workflow_example.py::test_the_baseline_step_remakes_the_committed_baseline",
}
#: Blocks that cannot run in a test, each with the reason (reviewed: adding one here is a decision).
SKIP = {
    'README.md: bash scripts/setup.sh': "builds the venv the tests run in (.ci/run runs it before the tests)",
    'README.md: bash scripts/test.sh': "the test suite itself",
    'docs/artifacts.md: metabench run --tasks boisson_card_n_random --model hf:minil':
        "fine-tunes MiniLM on every fold and view of a Table 1 recipe (tens of minutes on CPU)",
    "docs/artifacts.md: pip install 'metabench[search]'      # ray + hpbandster + Co":
        "installs packages, then runs a 50-trial Ray Tune search (hours)",
    'docs/core-suite.md: metabench --tasks core --model hf:minilm-l6 --dry-run    # w':
        "fine-tunes MiniLM and runs SmolLM2 on every core member (an hour on CPU; the GPU checks cover decoders)",
    'docs/data.md: metabench data ls                          # datasets, files':
        "placeholder names (my_task, my_plugin/data) and a download (data pull newsmet) the tests forbid",
    'docs/encoders.md: metabench --tasks meta4xnli_detection --model hf:minilm-l6':
        "fine-tunes MiniLM on every Meta4XNLI detection setup, 5 seeds, and a /models/roberta-base folder",
    'docs/hard-metaphors.md: export METABENCH_DATA_DIR=../shared/data': "trains the SOR encoder and mines HARD (an hour)",
    "docs/hard-metaphors.md: R=leaderboard/runs; D='hf_minilm-l6_epochs=1_lr=1e-4_warmup_":
        "needs this machine's HARD(minilm-l6) build (`metabench hard mine`, an hour)",
    'docs/hard-metaphors.md: metabench hard train --model hf:minilm-l6 --sor steps=900,co':
        "trains the SOR encoder (900 steps)",
    'docs/hard-metaphors.md: metabench --tasks vua_verb --model hf:minilm-l6,epochs=1,lr=':
        "fine-tunes MiniLM on VUA-Verb and writes into the committed leaderboard/runs",
    'docs/hard-metaphors.md: metabench --tasks hard_mi_minilm_l6_sor300,hard_mi_minilm_l6':
        "needs a HARD build and fine-tunes into the committed leaderboard/runs",
    'docs/hard-metaphors.md: metabench hard vua-phi --model hf:minilm-l6 --sor steps=900,':
        "needs the SOR(900 steps) model and writes into the committed leaderboard/runs",
    'docs/paraphrase-controls.md: export METABENCH_DATA_DIR=../shared/data':
        "runs SmolLM2 on three FLUTE tasks (minutes on CPU); its gap line reads MiniLM runs of the IMPLI gap tasks, "
        "a SICK fine-tune the block leaves to the reader (the committed runs' reproduction below runs here)",
    'docs/plugins.md: metabench data manifest my_package/data --family my_sentence':
        "placeholder folders (my_package/data, mirror/my_corpus) of a plugin the reader writes",
    'docs/plugins.md: @hookimpl': "a fragment of the plugin module above (its imports are there)",
    'docs/plugins.md: @hookimpl (2)': "a fragment of the plugin module above (its imports are there)",
    'docs/scaling.md: metabench run --tasks all --model majority --model lookup':
        "every task (minutes) and a MiniLM fine-tune per Boisson cell (hours)",
    "docs/scaling.md: pip install 'metabench[ray]'                     # or: bash":
        "installs packages, then every task on a Ray cluster",
    'docs/scaling.md: ray start --head --port 6379                      # on the h':
        "a multi-node Ray cluster and an 8B model on GPUs",
}


def blocks() -> dict[str, tuple[str, str]]:
    """Every example block: 'page: first line' (its first 60 characters; ' (2)' on the page's second block that
    opens with the same line) -> (language, code)."""
    found: dict[str, tuple[str, str]] = {}
    for page in PAGES:
        for match in BLOCK.finditer(page.read_text(encoding="utf-8")):
            first = next((line for line in match[2].splitlines() if line.strip()), "")
            key = f"{page.relative_to(REPO).as_posix()}: {first[:60].rstrip()}"
            same = sum(k == key or k.startswith(key + " (") for k in found)
            found[key + (f" ({same + 1})" if same else "")] = (match[1], match[2])  # a page's 2nd block so opened
    return found


def test_every_docs_block_is_run_or_skipped_with_a_reason():
    found = set(blocks())
    listed = [*RUN, *ELSEWHERE, *SKIP]
    assert len(listed) == len(set(listed)), "a block is listed twice"
    new = sorted(found - set(listed))
    assert not new, ("docs blocks neither run nor skipped: add each to RUN (it runs here), ELSEWHERE or SKIP "
                     "(with the reason) in tests/core/test_docs_examples.py:\n  " + "\n  ".join(new))
    gone = sorted(set(listed) - found)
    assert not gone, "listed blocks no longer in the docs (drop them or fix the key):\n  " + "\n  ".join(gone)
    assert all(reason.strip() for reason in SKIP.values())


@pytest.fixture
def clone(tmp_path) -> Path:
    """A folder laid out like a fresh clone's root after `bash scripts/setup.sh`."""
    root = tmp_path / "clone"
    root.mkdir()
    for name in LINKED:
        (root / name).symlink_to(REPO / name if name != ".venv" else Path(sys.prefix))
    mirror = os.environ.get("METABENCH_DATA_DIR")
    if mirror:
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "data").symlink_to(mirror)
    return root


@pytest.mark.slow
@pytest.mark.mirror
@pytest.mark.parametrize("key", [pytest.param(k, marks=m or [], id=k[:60]) for k, m in RUN.items()])
def test_docs_block_runs_as_written(key, clone):
    if not os.environ.get("METABENCH_DATA_DIR") or not Path(os.environ["METABENCH_DATA_DIR"]).is_dir():
        pytest.skip("needs the data mirror at METABENCH_DATA_DIR")
    if not (Path(sys.prefix) / "bin" / "activate").is_file():
        pytest.skip("the tests do not run in a venv (the examples activate .venv)")
    language, code = blocks()[key]
    env = dict(os.environ, PATH=f"{clone / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
               PYTHONDONTWRITEBYTECODE="1", METABENCH_ALLOW_DOWNLOAD="0")
    for variable in ("PYTHONPATH", "METABENCH_PLUGIN_MODULES"):
        env.pop(variable, None)  # as in a fresh shell: a block that needs them sets them
    if language == "python":
        (clone / "example.py").write_text(code, encoding="utf-8")
        command = [str(clone / ".venv" / "bin" / "python"), "example.py"]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", code]
    done = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"{key}\nexit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    if key in CHECKS:
        CHECKS[key](clone)


def _quick_start_fine_tune(clone: Path) -> None:
    """The README's MiniLM fine-tune is the suite's real-model encoder test (it replaced a separate 1-epoch
    smoke fine-tune that trained the same model a second time): 500 sentences, 4 epochs of batch 8, each epoch
    scored on the validation split for selection, and a model that learnt something. The block ran under
    `bash -e`, so its `compare` of the fine-tune with the baselines paired them."""
    import json

    task = clone / "runs" / "m4x_det_en_mono"
    results = json.loads((task / "hf_minilm-l6_max_train=500@seeds=0" / "results.json").read_text())
    info, majority = results["model"]["info"], json.loads((task / "majority" / "results.json").read_text())
    # the whole test split, as the baselines: the README's compare step pairs them (#50 item 7)
    assert results["n_items"] == majority["n_items"] == results["n_test_items"]
    assert results["model"]["family"] == "encoder" and info["model_type"] == "bert"
    record = info["checkpoints"]["0"]
    assert record["train_examples"] == 500 and record["steps"] == 4 * 63  # ceil(500 / 8) steps per epoch
    # a fresh 3-way head starts at ln 3 = 1.10 nats: the first epoch's mean loss must be well below it
    assert record["history"][0]["train_loss"] < 0.9
    assert record["select_metric"] == "span_f1"
    assert all(set(h["validation"]) >= {"span_f1", "token_f1"} for h in record["history"]) and len(record["history"]) == 4
    aggregate = results["metrics"]["aggregate"]
    assert set(aggregate) >= {"span_f1", "token_f1", "inv_f1", "oov_f1"}
    # the majority baseline tags every word O (span F1 0); 4 epochs on 500 sentences find real metaphors
    assert aggregate["span_f1"]["mean"] > majority["metrics"]["aggregate"]["span_f1"]["mean"] + 0.2


#: Checks of what a block wrote, beyond its exit status.
CHECKS = {'README.md: source .venv/bin/activate': _quick_start_fine_tune}
