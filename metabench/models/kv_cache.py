"""The key-value cache's name in a causal LM's forward pass, across transformers versions.

transformers 5 renamed ``past_key_values`` to ``cache`` (argument and output field) and warns on every call that
uses the old name: a decoder run would print a FutureWarning per batch. Reading the model's own signature keeps
one code path for the versions metabench supports (the older ones know only ``past_key_values``).
"""

from __future__ import annotations

import inspect


def cache_argument(model) -> str:
    """The keyword ``model``'s forward takes its cache under."""
    try:
        parameters = inspect.signature(getattr(model, "forward", model)).parameters
    except (TypeError, ValueError):  # a forward without a readable signature: the name every version accepts
        return "past_key_values"
    return "cache" if "cache" in parameters else "past_key_values"


def returned_cache(output):
    """The cache a forward pass with ``use_cache=True`` returned, under the name its version uses."""
    names = getattr(output, "keys", lambda: ())()
    return output["cache"] if "cache" in names else output.past_key_values


def select_rows(cache, rows, *, last_use: bool = False):
    """A cache of ``cache``'s batch rows ``rows`` (an index tensor, repeats allowed) that a forward pass may extend
    while ``cache`` stays as it was (``last_use``: ``cache`` is not needed again and is selected in place).

    Selecting rows makes new tensors, and a forward appends by making new ones too, so only the cache's containers
    are copied (its per-layer objects, or the older versions' per-layer lists), never the keys and values
    themselves: a deep copy would copy the whole batch's keys and values for every group of rows."""
    import copy

    if not last_use:
        clone = copy.copy(cache)
        if hasattr(cache, "layers"):  # transformers >= 4.56: one object per layer
            clone.layers = [copy.copy(layer) for layer in cache.layers]
        elif hasattr(cache, "key_cache"):  # older versions: lists of tensors, selected in place
            clone.key_cache, clone.value_cache = list(cache.key_cache), list(cache.value_cache)
        else:
            clone = copy.deepcopy(cache)
        cache = clone
    cache.batch_select_indices(rows)
    return cache
