"""The YAML nesting limit is metabench's, whatever the installed parser refuses first.

PyYAML 6.0.4's libyaml refuses deeply nested flow collections with its own cap and wording ("exceeded
maximum nesting depth") before metabench's event count reaches 51; a user must still read the documented
limit and its variable. These tests fake a fast parser that refuses in its own words, so they hold for every
PyYAML version, with or without libyaml.
"""

from __future__ import annotations

import pytest
import yaml

from metabench import limits
from metabench.config import yamlsource
from metabench.errors import ConfigError


class _RefusingLoader(yaml.SafeLoader):
    """A stand-in for a C parser with a small cap of its own: refuses after a few events, in its own words."""

    def get_event(self):
        self._seen = getattr(self, "_seen", 0) + 1
        if self._seen > 5:
            raise yaml.scanner.ScannerError(None, None, "some parser's own nesting cap", self.get_mark())
        return super().get_event()


@pytest.fixture
def refusing_parser(monkeypatch):
    monkeypatch.setattr(yamlsource, "_LOADER", _RefusingLoader)
    yamlsource._parsed.clear()
    yield
    yamlsource._parsed.clear()


@pytest.mark.parametrize("depth", [60, 5000, 100_000])
def test_deep_nesting_is_reported_under_metabench_limit(tmp_path, refusing_parser, depth):
    f = tmp_path / "deep.yaml"
    f.write_text("task: " + "[" * depth + "]" * depth + "\n")
    with pytest.raises(ConfigError) as err:
        yamlsource.load_located(f)
    assert f"{f}:1: nested more than {limits.YAML_DEPTH.value} levels deep" in str(err.value)
    assert limits.YAML_DEPTH.env in str(err.value)


def test_a_shallow_file_the_parser_refuses_keeps_the_parser_message(tmp_path, refusing_parser):
    """Only nesting is re-labelled: another refusal still says what the parser said, with file:line:col."""
    f = tmp_path / "shallow.yaml"
    f.write_text("task: a\nkind: b\nc: d\ne: f\n")
    with pytest.raises(ConfigError) as err:
        yamlsource.load_located(f)
    assert "invalid YAML: some parser's own nesting cap" in str(err.value)
    assert "nested more than" not in str(err.value)


def test_the_real_parser_reports_the_limit_too(tmp_path):
    f = tmp_path / "deep.yaml"
    f.write_text("task: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match=r"nested more than 50 levels deep"):
        yamlsource.load_located(f)
