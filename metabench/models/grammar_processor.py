"""The decoding constraint as a transformers ``LogitsProcessor`` (imported only when a tagger generates: it
needs torch and transformers).

Why it works on tensors: a decoding step on a GPU takes milliseconds, so a constraint that copies the generated
ids to the host, walks each row's prefix in Python and writes its mask row by row leaves the GPU idle most of the
step. Each sentence's grammar is compiled once into a deterministic automaton (:meth:`Grammar.automaton`), and
the automata of a batch are laid side by side in two small tables on the model's device: for every state, the
ids it allows and the state each leads to. Each row carries its state from step to step as a handle into them;
a step is a few gathers and one scatter, with no host round trip (``benchmarks/bench_grammar_overhead.py``
measures it against an unconstrained ``generate`` of the same length). :class:`GrammarTables` is the same
constraint for a decode loop of one's own (the tagger's greedy decode, :func:`metabench.models.decoder_tagger.
greedy_decode`), which reads only the allowed ids' scores.
"""

from __future__ import annotations

import torch
from transformers import LogitsProcessor

from .tag_grammar import FINISHED, Grammar

#: Row 0 of the tables: after eos, or after an id off the grammar (a finished row that ``generate`` pads).
_DONE = 0


def _tables(grammars: list[Grammar], eos: int, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(ids, targets, starts): ``ids[s]`` the ids state ``s`` allows (a short row padded by repeating its first
    id, so a scatter of the row writes only allowed ids), ``targets[s]`` the state each leads to, ``starts[g]``
    the state grammar ``g`` starts in. State 0 is the shared finished state, which allows only eos."""
    ids_rows, target_rows, starts = [[eos]], [[_DONE]], []
    for grammar in grammars:
        offset = len(ids_rows)
        starts.append(offset)
        for row in grammar.automaton():
            ids_rows.append(list(row))
            target_rows.append([_DONE if nxt == FINISHED else offset + nxt for nxt in row.values()])
    width = max(map(len, ids_rows))

    def pad(rows: list[list[int]]) -> torch.Tensor:
        return torch.tensor([row + row[:1] * (width - len(row)) for row in rows], dtype=torch.long, device=device)

    return pad(ids_rows), pad(target_rows), torch.tensor(starts, dtype=torch.long, device=device)


class GrammarTables:
    """The automata of a batch's grammars side by side on one device (:func:`_tables`), and the two things a
    decoding step does with them: keep only each row's allowed ids, and move each row's state on by its id."""

    def __init__(self, grammars: list[Grammar], eos: int, device):
        self.ids, self.targets, self.starts = _tables(grammars, eos, device)

    def advance(self, state: torch.Tensor, token: torch.Tensor) -> torch.Tensor:
        """Each row's state after writing ``token`` (finished, state 0, after eos or an id off its grammar)."""
        hit = self.ids[state] == token[:, None]
        nxt = self.targets[state].gather(1, hit.to(torch.int8).argmax(1, keepdim=True)).squeeze(1)
        return torch.where(hit.any(1), nxt, _DONE)

    def mask(self, state: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """``scores`` with -inf on every id a row's state does not allow (in place: no vocabulary-wide mask)."""
        allowed = self.ids[state]
        kept = scores.gather(1, allowed)
        return scores.fill_(float("-inf")).scatter_(1, allowed, kept)

    def best(self, state: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """The id ``argmax`` of :meth:`mask`'s scores would pick (ties: the lowest id, as ``argmax`` picks), read
        from the few allowed ids alone instead of the whole vocabulary."""
        allowed = self.ids[state]
        kept = scores.gather(1, allowed)
        top = kept.max(1, keepdim=True).values
        return torch.where(kept == top, allowed, torch.iinfo(allowed.dtype).max).min(1).values


class GrammarProcessor(LogitsProcessor):
    """Leaves a finite score only on the ids each row's grammar allows next; every other id gets -inf, whatever
    the model or an earlier processor preferred. Rows are batch x beams (row ``r`` is sentence ``r // beams``);
    the generated ids start at column ``start``. A finished row may write only ``eos`` (generation pads it).

    Beam search reorders rows between steps; a row's parent is the previous row of the same sentence whose ids
    its prefix repeats (found on the device). Greedy decoding keeps rows in place."""

    def __init__(self, grammars: list[Grammar], start: int, beams: int, eos: int):
        self.grammars, self.start, self.beams, self.eos = grammars, start, beams, eos
        self._state: torch.Tensor | None = None
        self._previous: torch.Tensor | None = None

    def _parents(self, input_ids: torch.LongTensor) -> torch.Tensor:
        """For each row, the row of the previous step it extends (beam search only)."""
        rows, groups = input_ids.shape[0], input_ids.shape[0] // self.beams
        prefix = input_ids[:, self.start : -1].reshape(groups, self.beams, 1, -1)
        before = self._previous[:, self.start :].reshape(groups, 1, self.beams, -1)
        match = (prefix == before).all(-1).to(torch.int8).argmax(-1)  # [groups, beams]: the first equal parent
        base = torch.arange(0, rows, self.beams, device=input_ids.device).unsqueeze(1)
        return (base + match).reshape(-1)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._state is None or input_ids.shape[1] == self.start:  # the first step: tables on the ids' device
            self.tables = GrammarTables(self.grammars, self.eos, input_ids.device)
            state = self.tables.starts.repeat_interleave(self.beams)
        else:
            state = self._state if self.beams == 1 else self._state[self._parents(input_ids)]
            state = self.tables.advance(state, input_ids[:, -1])
        self._state = state
        if self.beams > 1:
            self._previous = input_ids
        return self.tables.mask(state, scores)
