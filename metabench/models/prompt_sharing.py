"""Choice scoring that forwards each prompt once and scores every option from its key/value cache.

lm-eval's ``HFLM.loglikelihood`` forwards each (context, option) pair as its own sequence and merges pairs only
when ``(context + option)[:-1]`` is identical, i.e. for one-token options. With multi-token options the whole
prompt is forwarded once per option: on the scored NLI tasks (a ~90-token chat prompt, options "\\nentailment"
and "\\nother" of 4 and 2 SmolLM2 tokens) that is 1.96x the tokens a shared prompt needs. ``hf-decoder``'s
``share_prompt=true`` answers ``ChoiceRequest`` here instead:

1. every (context, option) pair is tokenised by lm-eval's own ``_encode_pair`` (trailing spaces of the context
   move to the option; the context is encoded alone, the option is the rest of the encoded whole), so the
   token boundary is lm-eval's;
2. the contexts of up to ``batch`` items are forwarded once, right-padded with an attention mask, keeping
   their key/value cache and the logits at each context's last token (they predict every option's first token);
3. each option's tokens but its last are forwarded from its item's cache rows (one row per option, longest
   first in groups of ``batch`` rows so that little is padding, positions continuing the item's own context
   length, the context's padding masked out); the option's log-likelihood is the sum of its tokens'
   log-probabilities (summed in their dtype, as lm-eval sums), greedy when each token is the argmax.

An item lm-eval would treat specially is left to lm-eval (its entry is ``None``): an empty context (lm-eval
conditions on the prefix token), an empty option, or a context plus option longer than the model's window
(lm-eval left-truncates each pair on its own, so the pairs no longer share a prefix). The answers equal
lm-eval's up to floating-point summation order (different batch shapes and attention kernels): not
bit-identical, which is why the fingerprint tells the two paths apart.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ..errors import AdapterError
from .kv_cache import cache_argument, returned_cache


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
        for item, scores in zip(chunk, _score(lm, chunk, batch), strict=True):
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


def _forward(lm, **inputs):
    """The model's forward pass as lm-eval's ``HFLM._model_call`` runs it (no gradients, its mixed-precision
    autocast), with the keyword arguments this scorer needs (``logits_to_keep``, the cache (:mod:`.kv_cache`),
    ``position_ids``): a model whose ``forward`` lacks one (old remote code) gets a clear error, not a traceback."""
    import torch

    dtype = getattr(lm, "mixed_precision_dtype", None)  # absent from older lm-eval
    try:
        with torch.no_grad(), torch.autocast(device_type=lm.device.type, dtype=dtype, enabled=dtype is not None):
            return lm.model(**inputs)
    except TypeError as exc:
        if "unexpected keyword argument" not in str(exc):
            raise
        raise AdapterError(
            f"model '{type(lm.model).__name__}' cannot be scored with a shared prompt: {exc}",
            hint="add share_prompt=false to the model arguments (lm-eval's own loglikelihood scoring)",
        ) from exc


def _score(lm, chunk: list[_Item], batch: int) -> list[list[tuple[float, bool]]]:
    import torch
    import torch.nn.functional as F

    device = lm.device
    softmax_dtype = getattr(lm, "softmax_dtype", None)
    lengths = torch.tensor([len(item.context) for item in chunk], device=device)
    ids = torch.zeros(len(chunk), int(lengths.max()), dtype=torch.long, device=device)
    for row, item in enumerate(chunk):
        ids[row, :len(item.context)] = torch.tensor(item.context, device=device)
    mask = (torch.arange(ids.shape[1], device=device) < lengths[:, None]).long()
    keep = torch.unique(lengths - 1)  # sorted: only these positions go through the (vocabulary-sized) head
    out = _forward(lm, input_ids=ids, attention_mask=mask, use_cache=True, logits_to_keep=keep)
    last = out.logits[torch.arange(len(chunk), device=device), torch.searchsorted(keep, lengths - 1)]
    first = F.log_softmax(last, dim=-1, dtype=softmax_dtype)  # [item, vocab]: each option's first token
    scores = {(b, j): _picked(first[b:b + 1], cont[:1])
              for b, item in enumerate(chunk) for j, cont in enumerate(item.options)}

    # The options' other tokens, longest first in groups of `batch` rows (little padding), each row on a copy
    # of its item's cached context (a forward appends to the cache it is given).
    rows = sorted(((b, j) for b, item in enumerate(chunk) for j, cont in enumerate(item.options) if len(cont) > 1),
                  key=lambda key: -len(chunk[key[0]].options[key[1]]))
    for start in range(0, len(rows), batch):
        group = rows[start:start + batch]
        owner = torch.tensor([b for b, _ in group], device=device)
        span = len(chunk[group[0][0]].options[group[0][1]]) - 1
        cont_ids = torch.zeros(len(group), span, dtype=torch.long, device=device)
        cont_mask = torch.zeros_like(cont_ids)
        for row, (b, j) in enumerate(group):
            tokens = chunk[b].options[j][:-1]
            cont_ids[row, :len(tokens)] = torch.tensor(tokens, device=device)
            cont_mask[row, :len(tokens)] = 1
        cache = returned_cache(out) if start + batch >= len(rows) else copy.deepcopy(returned_cache(out))
        cache.batch_select_indices(owner)
        positions = lengths[owner][:, None] + torch.arange(span, device=device)  # each row's own context length on
        logits = _forward(lm, input_ids=cont_ids, attention_mask=torch.cat([mask[owner], cont_mask], dim=1),
                          position_ids=positions, use_cache=True, **{cache_argument(lm.model): cache}).logits
        logprobs = F.log_softmax(logits, dim=-1, dtype=softmax_dtype)
        for row, (b, j) in enumerate(group):
            cont = chunk[b].options[j]
            head, head_greedy = scores[(b, j)]
            tail, greedy = _picked(logprobs[row, :len(cont) - 1], cont[1:])
            scores[(b, j)] = (torch.cat([head, tail]), head_greedy and greedy)
    # one sum per option in the log-probabilities' dtype, as lm-eval sums (in bfloat16 the order shows)
    return [[(float(scores[(b, j)][0].sum()), scores[(b, j)][1]) for j in range(len(item.options))]
            for b, item in enumerate(chunk)]


def _picked(logprobs, tokens: list[int]):
    """The log-probabilities of ``tokens`` (one per row of ``logprobs``) and whether each is the argmax."""
    import torch

    target = torch.tensor(tokens, device=logprobs.device)
    return logprobs.gather(1, target[:, None]).squeeze(1), bool((logprobs.argmax(-1) == target).all())


def forwarded_tokens(lm, contexts: list[str], options: list[tuple[str, ...]]) -> dict[str, int]:
    """Tokens each path forwards for these items, by lm-eval's ``_encode_pair`` (padding not counted):
    lm-eval one sequence per distinct ``(context + option)[:-1]`` (its one-token-option grouping), the shared
    path each context once plus each option but its last token (an item it leaves to lm-eval: lm-eval's; empty
    contexts, which no metabench task has, are not counted)."""
    lmeval = shared = 0
    for index, (context, opts) in enumerate(zip(contexts, options, strict=True)):
        pairs = [lm._encode_pair(context, option) for option in opts] if context else []
        by_lmeval = sum(len(seq) for seq in {tuple((c + o)[:-1]) for c, o in pairs})
        item = _encode(lm, index, context, opts)
        lmeval += by_lmeval
        shared += by_lmeval if item is None else len(item.context) + sum(len(o) - 1 for o in item.options)
    return {"tokens_lm_eval": lmeval, "tokens_shared_prompt": shared}
