"""MUNCH option shuffling: deterministic, fair, logged by the seed, and the gold follows the apt option."""

from __future__ import annotations

import pytest

from metabench.data.items import ParaphraseJudgement
from metabench.errors import MetabenchError
from metabench.kinds.prompts import coin, munch_judgement


def _item(item_id, labels=("apt", "inapt"), condition="implicit"):
    return ParaphraseJudgement(id=item_id, sentence="s *w*", plain="s w", word="w", span=(2, 3), options=("x", "y"),
                               words=("x", "y"), labels=labels,
                               answer_type={("apt", "apt"): "apt_apt", ("inapt", "inapt"): "inapt_inapt"}.get(labels, "apt_inapt"),
                               condition=condition)


def test_coin_is_fixed_across_runs_and_machines():
    # sha256-based: these values never change (a change would silently reshuffle every published run)
    assert [coin(20240311, f"munch:{i}") for i in range(4)] == [True, True, True, False]
    assert sum(coin(20240311, f"munch:{i}") for i in range(1492)) == 781


def test_shuffle_is_fair_and_depends_on_the_seed():
    flips = [coin(7, f"munch:{i}") for i in range(4000)]
    assert 0.45 < sum(flips) / len(flips) < 0.55
    assert flips != [coin(8, f"munch:{i}") for i in range(4000)]


def test_same_order_in_every_condition_and_prompt():
    for i in range(50):
        fields = {c: munch_judgement(_item(f"munch:{i}", condition=c), 20240311) for c in ("implicit", "msent", "mword")}
        assert len({(f["option_a"], f["option_b"]) for f in fields.values()}) == 1


@pytest.mark.parametrize("labels,gold", [(("apt", "inapt"), None), (("inapt", "apt"), None), (("apt", "apt"), 2), (("inapt", "inapt"), 3)])
def test_gold_mapping(labels, gold):
    for i in range(20):
        fields = munch_judgement(_item(f"munch:{i}", labels), 20240311)
        if gold is None:  # apt+inapt: the letter of the apt option, wherever the shuffle put it
            apt = "x" if labels[0] == "apt" else "y"
            expected = 0 if fields["option_a"] == apt else 1
            assert fields["gold"] == expected and fields["gold_letter"] == "AB"[expected]
        else:
            assert fields["gold"] == gold and fields["gold_letter"] == "ABCD"[gold]


def test_bad_labels_are_refused():
    with pytest.raises(MetabenchError):
        munch_judgement(_item("m:1", ("apt", "maybe")), 1)
