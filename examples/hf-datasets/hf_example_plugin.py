"""The smallest plugin whose data is already a `datasets` dataset: it registers its task folder, and the
task YAML names the folder (``hf_dataset:``). No loader, no manifest: metabench hashes the folder's files.

    METABENCH_PLUGIN_MODULES=hf_example_plugin PYTHONPATH=examples/hf-datasets \
        metabench run --tasks hf_example_cls --model majority
"""

from __future__ import annotations

from pathlib import Path

from metabench.hookspecs import hookimpl


@hookimpl
def metabench_register_tasks(register):
    register(str(Path(__file__).parent / "tasks"))
