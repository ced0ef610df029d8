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
