"""Runs over different items cannot be paired, and the error says which rerun would pair them (#50 item 7: the
README's fine-tune with --limit against full baselines failed with only "nothing could be paired")."""

from __future__ import annotations


def test_nothing_paired_names_the_reruns_that_would_pair_the_runs(cli, toy_runs, short_runs):
    full, short = toy_runs / "toy_cls" / "majority", short_runs / "toy_cls" / "lookup@limit=30"
    code, _, err = cli("compare", full, short)
    assert code == 2
    assert "nothing could be paired" in err and "is the only run over its items" in err
    hint = err.split("hint: ")[1]
    assert "rerun one side so that both hold the same items" in hint
    # the baseline of the full runs rerun over the first 30 items, next to them; or the short run over every item
    assert f"metabench --tasks toy_cls --model majority --limit 30 -o {toy_runs}" in hint
    assert f"metabench --tasks toy_cls --model lookup -o {short_runs}" in hint


def test_a_rerun_with_the_hinted_command_pairs_them(cli, report_registry, toy_runs, short_runs, tmp_path):
    import shutil

    import toy_plugin

    from metabench.runner import RunOptions, run

    runs = tmp_path / "runs"
    shutil.copytree(short_runs, runs)
    # the hint's command, as the Python API runs it
    run(report_registry, "toy_cls", ["majority"], RunOptions(output_dir=runs, limit=30, progress=False,
                                                            data_dir=toy_plugin.DATA_DIR))
    code, out, err = cli("compare", runs / "toy_cls" / "lookup@limit=30", runs / "toy_cls" / "majority@limit=30")
    assert code == 0, err
    assert "toy_cls" in out
