"""The hard family's tasks, shipped in its plugin (plugins/metabench-hard): a HARD detector is trained exactly as
the core vua_verb task trains (so one cached checkpoint serves both test sets, `metabench hard gap`), which the
plugin's copy of the MelBERT settings must keep saying."""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
COPY = REPO / "plugins" / "metabench-hard" / "metabench_hard" / "tasks" / "hard" / "_melbert.yaml"


def test_the_plugins_melbert_settings_are_the_cores():
    assert yaml.safe_load(COPY.read_text(encoding="utf-8")) == yaml.safe_load(
        (REPO / "tasks" / "vua" / "_melbert.yaml").read_text(encoding="utf-8"))

