"""A test plugin: ``coin``, a decoder that samples its answer from the sampling seed it is given.

Each answer is a pure function of (sampling seed, request): the label ``metaphorical`` with probability ``p``
(default 0.5), else ``literal``, optionally in another spelling (`` Metaphorical.``) that the label parser reads as
the same answer. Items whose key hashes below ``steady`` are answered ``literal`` whatever the seed (they never
flip). Every answered (sampling seed, item key's hash) pair is appended to ``$COIN_LOG`` when set, so a test can count what
was computed and what the cache served.
"""

from __future__ import annotations

import hashlib
import os

from metabench.hookspecs import hookimpl
from metabench.models.base import Adapter
from metabench.requests import ChoiceRequest, GenerateRequest


def unit(*parts: object) -> float:
    """A number in [0, 1) from its parts, the same on every machine."""
    digest = hashlib.sha256("\x00".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class Coin(Adapter):
    name = "coin"
    family = "decoder"
    serves = (GenerateRequest, ChoiceRequest)
    allowed_args = ("p", "steady")

    def predict(self, requests, seed):
        p, steady = float(self.args.get("p", 0.5)), float(self.args.get("steady", 0))
        log = os.environ.get("COIN_LOG")
        answers = []
        for request in requests:
            if isinstance(request, ChoiceRequest):
                answers.append({"index": 0})
                continue
            if unit("steady", request.key) < steady:
                answers.append("literal")
            else:
                draw = unit(seed, request.key)
                answers.append(("metaphorical" if draw < p / 2 else " Metaphorical.") if draw < p else "literal")
            if log:
                with open(log, "a", encoding="utf-8") as handle:
                    handle.write(f"{seed}\t{hashlib.sha256(request.key.encode()).hexdigest()[:16]}\n")
        return answers


@hookimpl
def metabench_register_models(register):
    register("coin", "sampling_plugin:Coin", description="a sampling decoder: its answer is drawn from the seed")
