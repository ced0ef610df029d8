"""A rule-based adapter: the smallest complete example of the adapter interface."""

from __future__ import annotations

from metabench.plugin_api import Adapter, ClassifyRequest

DEFAULT_CUES = ("grasp", "storm", "drown", "flood", "bright", "attack", "sharp", "heavy")


class CueWords(Adapter):
    name = "cue-words"
    serves = (ClassifyRequest,)
    seeded = False
    allowed_args = ("words",)

    def __init__(self, args, *, registry=None, settings=None):
        super().__init__(args, registry=registry, settings=settings)
        words = self.args.get("words")
        self.cues = tuple(words.split("+")) if words else DEFAULT_CUES

    def predict(self, requests, seed):
        out = []
        for request in requests:
            tokens = request.text.lower().split()
            hit = any(token.startswith(cue) for token in tokens for cue in self.cues)
            out.append("metaphorical" if hit else "literal")
        return out
