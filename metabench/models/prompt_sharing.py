"""Choice scoring that forwards each prompt once and scores every option from its key/value cache.

lm-eval's ``HFLM.loglikelihood`` forwards each (context, option) pair as its own sequence and merges pairs only
when ``(context + option)[:-1]`` is identical, i.e. for one-token options. With multi-token options the whole
prompt is forwarded once per option: on the scored NLI tasks (a ~105-token chat prompt, options "\\nentailment"
and "\\nother" of 4 and 2 SmolLM2 tokens) that is 1.96x the tokens a shared prompt needs. ``hf-decoder``'s
``share_prompt=true`` answers ``ChoiceRequest`` here instead:

1. every (context, option) pair is tokenised by lm-eval's own ``_encode_pair`` (trailing spaces of the context
   move to the option; the context is encoded alone, the option is the rest of the encoded whole), so the
   token boundary is lm-eval's;
2. the contexts of up to ``batch`` items are forwarded once, right-padded with an attention mask, keeping
   their key/value cache and the logits at each context's last token (they predict every option's first token);
3. each option's tokens but its last are forwarded from its item's cache rows (one row per option, positions
   continuing the item's own context length, the context's padding masked out); the option's log-likelihood
   is the sum of its tokens' log-probabilities, greedy when each token is the argmax, as in lm-eval.

An item lm-eval would treat specially is left to lm-eval (its entry is ``None``): an empty context (lm-eval
conditions on the prefix token), an empty option, or a context plus option longer than the model's window
(lm-eval left-truncates each pair on its own, so the pairs no longer share a prefix). The answers equal
lm-eval's up to floating-point summation order (different batch shapes and attention kernels): not
bit-identical, which is why the fingerprint tells the two paths apart.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class _Item:
    index: int  # position in the caller's list
    context: list[int]
    options: list[list[int]]


def shared_prompt_scores(lm, contexts: list[str], options: list[tuple[str, ...]],
                         batch: int) -> list[list[tuple[float, bool]] | None]:
    """``(log-likelihood, is_greedy)`` of every option of every context, with lm-eval's HFLM ``lm``'s model and
    tokenisation; ``None`` for an item left to lm-eval (see the module docstring)."""
    items = [item for item in (_encode(lm, i, c, o) for i, (c, o) in enumerate(zip(contexts, options, strict=True)))
             if item is not None]
    items.sort(key=lambda item: -len(item.context))  # similar lengths together: little padding
    out: list[list[tuple[float, bool]] | None] = [None] * len(contexts)
    for start in range(0, len(items), batch):
        chunk = items[start:start + batch]
        for item, scores in zip(chunk, _score(lm, chunk), strict=True):
            out[item.index] = scores
    return out


def _encode(lm, index: int, context: str, options: tuple[str, ...]) -> _Item | None:
    if not context or not options:
        return None
    pairs = [lm._encode_pair(context, option) for option in options]
    context_enc = pairs[0][0]  # the context's tokens depend on the context alone
    conts = [cont for _, cont in pairs]
    if not context_enc or not all(conts) or len(context_enc) + max(map(len, conts)) > lm.max_length + 1:
        return None
    return _Item(index, context_enc, conts)


@contextmanager
def _forward_mode(lm):
    """What lm-eval's ``HFLM._model_call`` runs the model under: no gradients, its mixed-precision autocast."""
    import torch

    dtype = getattr(lm, "mixed_precision_dtype", None)  # absent from older lm-eval
    with torch.no_grad(), torch.autocast(device_type=lm.device.type, dtype=dtype, enabled=dtype is not None):
        yield


def _score(lm, chunk: list[_Item]) -> list[list[tuple[float, bool]]]:
    import torch
    import torch.nn.functional as F

    device, model = lm.device, lm.model
    lengths = torch.tensor([len(item.context) for item in chunk], device=device)
    ids = torch.zeros(len(chunk), int(lengths.max()), dtype=torch.long, device=device)
    for row, item in enumerate(chunk):
        ids[row, :len(item.context)] = torch.tensor(item.context, device=device)
    mask = (torch.arange(ids.shape[1], device=device) < lengths[:, None]).long()
    keep = torch.unique(lengths - 1)  # sorted: only these positions go through the (vocabulary-sized) head
    with _forward_mode(lm):
        out = model(input_ids=ids, attention_mask=mask, use_cache=True, logits_to_keep=keep)
    last = out.logits[torch.arange(len(chunk), device=device), torch.searchsorted(keep, lengths - 1)]
    first = F.log_softmax(last, dim=-1, dtype=getattr(lm, "softmax_dtype", None))  # [item, vocab]: each option's first token

    rows = [(b, j) for b, item in enumerate(chunk) for j, cont in enumerate(item.options) if len(cont) > 1]
    rest: dict[tuple[int, int], object] = {}
    if rows:
        owner = torch.tensor([b for b, _ in rows], device=device)
        span = max(len(chunk[b].options[j]) - 1 for b, j in rows)
        cont_ids = torch.zeros(len(rows), span, dtype=torch.long, device=device)
        cont_mask = torch.zeros_like(cont_ids)
        for row, (b, j) in enumerate(rows):
            tokens = chunk[b].options[j][:-1]
            cont_ids[row, :len(tokens)] = torch.tensor(tokens, device=device)
            cont_mask[row, :len(tokens)] = 1
        cache = out.past_key_values
        cache.batch_select_indices(owner)  # each option gets its item's context rows
        positions = lengths[owner][:, None] + torch.arange(span, device=device)
        with _forward_mode(lm):
            logits = model(input_ids=cont_ids, attention_mask=torch.cat([mask[owner], cont_mask], dim=1),
                           position_ids=positions, past_key_values=cache, use_cache=True).logits
        logprobs = F.log_softmax(logits, dim=-1, dtype=getattr(lm, "softmax_dtype", None))
        rest = {key: logprobs[row] for row, key in enumerate(rows)}

    scores = []
    for b, item in enumerate(chunk):
        per_option = []
        for j, cont in enumerate(item.options):
            steps = first[b:b + 1]
            if len(cont) > 1:
                steps = torch.cat([steps, rest[(b, j)][:len(cont) - 1]])
            target = torch.tensor(cont, device=device)
            picked = steps.gather(1, target[:, None]).squeeze(1)
            per_option.append((float(picked.sum()), bool((steps.argmax(-1) == target).all())))
        scores.append(per_option)
    return scores
