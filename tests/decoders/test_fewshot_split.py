"""``splits.fewshot``: few-shot examples come from the split the task names there, not from its training split;
without it they come from train, as before."""

from __future__ import annotations

import dataclasses

from metabench.config.index import TaskIndex
from metabench.jobs import prepare


def _task(registry, *, fewshot_split):
    """toy_choice with 2 few-shot examples, drawn from ``fewshot_split`` (None: from train)."""
    task = TaskIndex(registry).load("toy_choice")
    config = task.config
    decoder = config.protocol.decoder.model_copy(update={"fewshot": 2})
    splits = config.splits.model_copy(update={"fewshot": fewshot_split})
    config = config.model_copy(update={"splits": splits, "protocol": config.protocol.model_copy(update={"decoder": decoder})})
    return dataclasses.replace(task, config=config)


def _shot_texts(data) -> set[str]:
    """The sentences of the first prompt's few-shot examples (every block before the item's own)."""
    prompt = data.kind.request(data.test.items[0]).context
    blocks = prompt.split(data.kind.FEWSHOT_DELIMITER)[:-1]
    return {block.split("\n")[0].removeprefix("Sentence: ") for block in blocks}


def test_splits_fewshot_changes_where_the_examples_come_from(decoder_registry):
    from_train = prepare(decoder_registry, _task(decoder_registry, fewshot_split=None))
    from_test = prepare(decoder_registry, _task(decoder_registry, fewshot_split="test"))
    train_texts = {item.text for item in from_train.splits["train"].items}
    test_texts = {item.text for item in from_test.test.items}
    assert from_test.splits["fewshot"] is not None and from_train.splits["fewshot"] is None
    shots_train, shots_test = _shot_texts(from_train), _shot_texts(from_test)
    assert len(shots_train) == len(shots_test) == 2
    assert shots_train <= train_texts and shots_test <= test_texts
    assert shots_test.isdisjoint(train_texts)  # the toy data's splits share no sentence
    # the few-shot slice is part of the data the answers are keyed on
    assert from_test.data_hash() != from_train.data_hash()
