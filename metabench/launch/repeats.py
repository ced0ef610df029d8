"""Repeated draws of sampled generation (``--repeat N``): N answers per item and seed, voted into one.

A decoder that samples (``protocol.decoder.temperature`` > 0) can answer an item differently each time it is
asked; one draw per item makes its score, and every comparison with it, partly a coin toss. With ``--repeat N``
each seed is drawn N times, each draw with its own sampling seed, and an item's answer is the majority of
its N draws:

- **Sampling seeds.** Draw 0 samples with the run seed itself (so it is the answer a run without ``--repeat``
  gives, and shares its cache rows); draw ``r`` > 0 samples with :func:`sampling_seed` (``seed``, ``r``), a
  32-bit number derived from both, recorded in results.json. The answer cache keys draw ``r`` > 0 by
  ``"<seed>~draw<r>"`` instead of the seed, so no draw is ever served another draw's answer.
- **Majority.** Draws are grouped by :meth:`metabench.kinds.base.Kind.answer_key` (generated text by what its
  parser reads: " Metaphorical." and "metaphorical" are one answer; every unreadable output is one answer).
  The group with the most draws wins; a tie goes to the group whose first draw came earliest (draw 0 first).
  The majority's answer is that group's earliest draw, and its scores are that draw's scores.
- **Flip rate.** An item's flip rate is the share of its draws outside the majority group (0 when every draw
  agrees; at most (N-1)/N); the task's is the mean over items and seeds.

Only sampled generation repeats: a greedy decoder, scored options, an encoder or a baseline gives the same
answer every time, so ``--repeat`` N > 1 on such a job is refused before anything runs (:func:`check`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..errors import MetabenchError
from ..requests import GenerateRequest

#: The tie rule, as results.json records it.
TIE_RULE = "most draws; a tie goes to the answer drawn first"


@dataclass(frozen=True)
class Draw:
    """One draw of one seed: the seed that keys its answers in the cache and the seed its sampler starts from."""

    seed: int
    index: int

    @property
    def sampling_seed(self) -> int:
        return sampling_seed(self.seed, self.index)

    @property
    def cache_seed(self) -> int | str:
        """The seed part of the draw's cache keys: the run seed for draw 0 (a run without --repeat's own)."""
        return self.seed if self.index == 0 else f"{self.seed}~draw{self.index}"


def sampling_seed(seed: int, index: int) -> int:
    """The sampler's seed of draw ``index`` of run seed ``seed``: the seed itself for draw 0, else 32 bits of
    sha256 over both (reproducible, and distinct across draws and seeds)."""
    if index == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"metabench-draw\x00{seed}\x00{index}".encode()).digest()[:4], "big")


def draws(seed: int, repeat: int) -> list[Draw]:
    return [Draw(seed, index) for index in range(repeat)]


def check(task, model: str, adapter, kind, repeat: int) -> None:
    """Refuse ``--repeat`` N > 1 on a job whose answers cannot differ between draws (before anything runs);
    ``model``: the ``--model`` value, as the user wrote it."""
    if repeat <= 1:
        return
    why = None
    section = getattr(kind, "protocol", None) or "decoder"  # the protocol section the model follows
    if adapter.family != "decoder":
        why = f"{adapter.family} models answer the same way every time (only a decoder samples)"
    elif kind.request_type() is None:
        why = "its kind does not declare the requests it sends (Kind.request_type), so they cannot be known to sample"
    elif kind.request_type() is not GenerateRequest:
        why = (f"its kind sends {kind.request_type().__name__}, which a decoder answers deterministically (only free "
               "generation samples)")
    elif not getattr(getattr(task.config.protocol, section, None), "temperature", 0) > 0:
        why = f"its protocol.{section}.temperature is 0 (greedy decoding gives the same answer every draw)"
    if why is not None:
        raise MetabenchError(
            f"--repeat {repeat}: task '{task.name}' with '{model}' cannot repeat: {why}",
            hint="--repeat is for sampled generation (protocol.decoder.temperature > 0); leave it out for this "
                 "task and model, or run the sampled tasks in a command of their own",
        )


@dataclass
class Voted:
    """One item's draws voted: the majority's draw index, its vote count and the flip rate."""

    winner: int
    votes: int
    flip_rate: float


def vote(keys: list[str]) -> Voted:
    """The majority of one item's draws, given each draw's answer key (tie rule: :data:`TIE_RULE`)."""
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for index, key in enumerate(keys):
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, index)
    best = min(counts, key=lambda k: (-counts[k], first[k]))
    return Voted(first[best], counts[best], 1 - counts[best] / len(keys))


def voted_rows(kind, items: list, golds: list, seed: int, answers: list[list]) -> tuple[list, list[dict]]:
    """The majority answers of one seed (``answers``: per draw, one answer per item) and its samples rows:
    the majority's prediction and scores, with every draw's sampling seed, answer and scores beside them."""
    seeds = [sampling_seed(seed, index) for index in range(len(answers))]
    majority, rows = [], []
    for position, (item, gold) in enumerate(zip(items, golds)):
        preds = [draw[position] for draw in answers]
        voted = vote([kind.answer_key(item, pred) for pred in preds])
        scored = [kind.item_scores(item, gold, pred) for pred in preds]
        majority.append(preds[voted.winner])
        rows.append({
            "id": item.id, "seed": seed, "gold": gold, "prediction": preds[voted.winner],
            "scores": scored[voted.winner], "majority_votes": voted.votes, "flip_rate": voted.flip_rate,
            "draws": [{"sampling_seed": s, "prediction": p, "scores": sc} for s, p, sc in zip(seeds, preds, scored)],
        })
    return majority, rows


def summary(repeat: int, seeds: list[int], rows: list[dict], per_draw: dict[str, list[dict]], primary: str) -> dict:
    """results.json's ``repeat`` block: how the answers were drawn and voted, and how often items flipped."""
    rates = [row["flip_rate"] for row in rows]
    by_seed = {str(seed): [row["flip_rate"] for row in rows if row["seed"] == seed] for seed in seeds}
    return {
        "n": repeat,
        "answers": f"majority of {repeat} draws per item",
        "tie_rule": TIE_RULE,
        "sampling_seeds": {str(seed): [sampling_seed(seed, index) for index in range(repeat)] for seed in seeds},
        "mean_flip_rate": sum(rates) / len(rates) if rates else 0.0,
        "flipping_items": sum(rate > 0 for rate in rates),
        "per_seed": {seed: {"mean_flip_rate": sum(r) / len(r) if r else 0.0, "flipping_items": sum(x > 0 for x in r),
                            f"{primary}_per_draw": [m.get(primary) for m in per_draw[seed]]}
                     for seed, r in by_seed.items()},
    }
