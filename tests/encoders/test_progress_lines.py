"""A fine-tune whose stderr is a log shows itself as plain lines (#50 item 7: the README's MiniLM fine-tune printed
nothing for 50 minutes, since bars are off there): job k/n, task, model, seed, epoch, step, examples and an ETA."""

from __future__ import annotations

import re

import pytest

import metabench


@pytest.fixture
def registry(monkeypatch, tmp_path):
    import enc_toy_plugin
    import toy_plugin

    from metabench import plugins

    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    return plugins.load(extra_plugins=(toy_plugin, enc_toy_plugin))


def test_a_fine_tune_into_a_log_prints_its_epoch_step_and_eta(registry, tmp_path, tiny_bert, monkeypatch, capsys):
    monkeypatch.setattr("metabench.progress.MIN_INTERVAL", 0.0001)  # below the 1 s floor a user may set
    monkeypatch.setenv("METABENCH_PROGRESS_INTERVAL", "0.001")
    model = f"hf:pretrained={tiny_bert}"
    (result,) = metabench.evaluate("enc_toy_tag", [model], output_dir=tmp_path / "runs", progress="lines", seeds=[0],
                                   launcher="serial", registry=registry)
    assert result.ok, result.message
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b[" not in err and "it/s" not in err
    job = re.escape(f"job 1/1 | enc_toy_tag | {model}")
    assert re.search(job + r" \| fine-tune \S+ seed 0: \d+/\d+ steps \(\d+ %\), epoch \d+/\d+, loss \d\.\d{4}, "
                     r"examples \d+, \d+s elapsed", err), err
    assert re.search(job + r" \| fine-tune \S+ seed 0: done, (\d+)/\1 steps", err), err
    assert not re.search(r"done, .*now scoring", err), err  # the validation note goes once it is scored
    assert re.search(r"ETA \d+s", err), err
