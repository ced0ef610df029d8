"""The decoding constraint as a transformers ``LogitsProcessor`` (imported only when a tagger generates: it
needs torch and transformers)."""

from __future__ import annotations

import torch
from transformers import LogitsProcessor

from .tag_grammar import Grammar


class GrammarProcessor(LogitsProcessor):
    """Leaves a finite score only on the ids each row's grammar allows next; every other id gets -inf, whatever
    the model or an earlier processor preferred. Rows are batch x beams (row ``r`` is sentence ``r // beams``);
    the generated ids start at column ``start``. A finished row may write only ``eos`` (generation pads it)."""

    def __init__(self, grammars: list[Grammar], start: int, beams: int, eos: int):
        self.grammars, self.start, self.beams, self.eos = grammars, start, beams, eos

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        mask = torch.full_like(scores, float("-inf"))
        for row, ids in enumerate(input_ids[:, self.start:].tolist()):
            allowed = self.grammars[row // self.beams].allowed(ids) or {self.eos}
            mask[row, sorted(allowed)] = 0.0
        return scores + mask
