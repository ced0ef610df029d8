"""VUA-Verb test items get WordNet sense keys through vua_verb_wsd's glosses (real data: skipped without the mirror)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

MIRROR = Path(os.environ.get("METABENCH_DATA_DIR", Path(__file__).parents[3] / "shared" / "data"))
needs_mirror = pytest.mark.skipif(not (MIRROR / "vua").is_dir(), reason="no data mirror (set METABENCH_DATA_DIR)")


@needs_mirror
def test_vua_verb_test_items_map_to_wordnet_senses():
    from metabench import plugins
    from metabench_hard.vua_phi import vua_sense_keys

    rows, counts = vua_sense_keys(plugins.load(), MIRROR)
    assert counts == {"items": 5873, "no_gloss_match": 417, "ambiguous_gloss": 8}
    by_id = {r["id"]: r for r in rows}
    say = by_id["VUA_formatted_test:1"]
    assert (say["lemma"], say["sense"], say["label"]) == ("say", "say%2:32:00::", "literal")
    assert sum(bool(r["sense"]) for r in rows) == 5456
