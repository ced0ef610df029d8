"""Choice scoring that forwards each prompt once and scores every option from its key/value cache.

lm-eval's ``HFLM.loglikelihood`` forwards each (context, option) pair as its own sequence and merges pairs only
when ``(context + option)[:-1]`` is identical, i.e. for one-token options. With multi-token options the whole
prompt is forwarded once per option: on the scored NLI tasks (a ~90-token chat prompt, options "\\nentailment"
and "\\nother" of 4 and 2 SmolLM2 tokens) that is 1.96x the tokens a shared prompt needs. ``hf-decoder``'s
``share_prompt=true`` answers ``ChoiceRequest`` here instead:

1. every (context, option) pair is tokenised by lm-eval's own ``_encode_pair`` (trailing spaces of the context
   move to the option; the context is encoded alone, the option is the rest of the encoded whole), so the
   token boundary is lm-eval's (the context is encoded once per item, not once per option);
2. the contexts of up to ``batch`` items are forwarded once, right-padded with an attention mask, keeping
   their key/value cache and the logits at each context's last token (they predict every option's first token);
   the tokens every context of the batch starts with (a few-shot prompt's demonstrations, drawn once per seed)
   are forwarded once for the batch and their cache shared by its rows (:func:`_shared_prefix`): a 5-shot
   prompt is mostly its demonstrations, so each item then costs about its own tokens;
3. each option's tokens but its last are forwarded from its item's cache rows (one row per option, longest
   first in groups of ``batch`` rows so that little is padding, positions continuing the item's own context
   length, the context's padding masked out); the option's log-likelihood is the sum of its tokens'
   log-probabilities (summed in their dtype, as lm-eval sums), greedy when each token is the argmax.

What a GPU cannot hide is kept out of the loop (``benchmarks/bench_decoder_overhead.py`` counts it): a batch's
token lists reach the device in a few copies per batch (none per option), every option's log-probabilities are gathered into one table on the
device, and the sums and greedy flags come back in one read per batch (not two host reads per option); the runner
hands requests over longest first across the whole split (:func:`request_order`, one global sort as lm-eval's
HFLM sorts), so its ``chunk_size`` batches do not each start from a mix of lengths.

An item lm-eval would treat specially is left to lm-eval (its entry is ``None``): an empty context (lm-eval
conditions on the prefix token), an empty option, or a context plus option longer than the model's window
(lm-eval left-truncates each pair on its own, so the pairs no longer share a prefix). The answers equal
lm-eval's up to floating-point summation order (different batch shapes and attention kernels): not
bit-identical, which is why the fingerprint tells the two paths apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import AdapterError
from .kv_cache import cache_argument, returned_cache, select_rows


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


def request_order(contexts: list[str], options: list[tuple[str, ...]]) -> list[int]:
    """The order to score items in so that a caller handing them over a few at a time (the runner's
    ``chunk_size``) still gives the scorer items of similar length together: longest first, as lm-eval's
    ``HFLM`` sorts all its requests. Characters stand for tokens (no tokenisation twice); ties keep their order."""
    return sorted(range(len(contexts)), key=lambda i: -(len(contexts[i]) + max(map(len, options[i]), default=0)))


def _encode(lm, index: int, context: str, options: tuple[str, ...]) -> _Item | None:
    """lm-eval's ``_encode_pair`` for every option, with the context (whose tokens depend on it alone) encoded
    once per item instead of once per option."""
    if not context or not options:
        return None
    if getattr(lm, "backend", "causal") != "causal":  # lm-eval encodes seq2seq pairs part by part
        pairs = [lm._encode_pair(context, option) for option in options]
        context_enc, conts = pairs[0][0], [cont for _, cont in pairs]
    else:  # _encode_pair: trailing spaces move to the option; the option is the rest of the encoded whole
        spaces = len(context) - len(context.rstrip())
        head, moved = (context[:-spaces], context[-spaces:]) if spaces else (context, "")
        context_enc = lm.tok_encode(head)
        conts = [lm.tok_encode(head + moved + option)[len(context_enc):] for option in options]
    if not context_enc or not all(conts) or len(context_enc) + max(map(len, conts)) > lm.max_length + 1:
        return None
    return _Item(index, context_enc, conts)


def to_device(rows: list[list[int]], device):
    """A tensor of host ``rows`` (equal lengths) on ``device``: built on the host and, on a GPU, copied from pinned
    memory without waiting (a tensor built straight on the device from a list is a blocking copy)."""
    import torch

    tensor = torch.tensor(rows, dtype=torch.long)
    if getattr(device, "type", str(device)).startswith("cuda"):
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


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
    """One batch of items: the token lists go to the device once, every option's token log-probabilities are
    gathered on the device into one table, and the sums and greedy flags come back in one read (no host round
    trip per option)."""
    import torch
    import torch.nn.functional as F

    device = lm.device
    softmax_dtype = getattr(lm, "softmax_dtype", None)
    lengths = [len(item.context) for item in chunk]
    width = max(lengths)
    keep = sorted({n - 1 for n in lengths})  # only these positions go through the (vocabulary-sized) head
    where = {position: k for k, position in enumerate(keep)}
    options = [(b, cont) for b, item in enumerate(chunk) for cont in item.options]  # option o: (its item, tokens)
    longest = max(len(cont) for _, cont in options)
    # a copy for the contexts, one per item (its length and kept position), one per option (its item, how many
    # tokens it has, its tokens zero-padded)
    shared = _shared_prefix([item.context for item in chunk])
    ids = to_device([item.context[shared:] + [0] * (width - len(item.context)) for item in chunk], device)
    facts = to_device([[n, where[n - 1]] for n in lengths], device)
    table = to_device([[b, len(cont), *cont, *[0] * (longest - len(cont))] for b, cont in options], device)
    owner, count, tokens = table[:, 0], table[:, 1], table[:, 2:]
    length = facts[:, 0]
    mask = (torch.arange(width, device=device) < length[:, None]).long()  # the whole context: prefix and the rest
    past = {}
    if shared:  # the tokens every context starts with (a few-shot prompt's demonstrations) forwarded once
        head = _forward(lm, input_ids=to_device([chunk[0].context[:shared]], device), use_cache=True, logits_to_keep=1)
        rows = torch.zeros(len(chunk), dtype=torch.long, device=device)
        past = {cache_argument(lm.model): select_rows(returned_cache(head), rows, last_use=True),
                "position_ids": shared + torch.arange(width - shared, device=device).expand(len(chunk), -1)}
    out = _forward(lm, input_ids=ids, attention_mask=mask, use_cache=True,
                   logits_to_keep=to_device([[k - shared for k in keep]], device)[0], **past)
    last = out.logits[torch.arange(len(chunk), device=device), facts[:, 1]]
    first = F.log_softmax(last, dim=-1, dtype=softmax_dtype)  # [item, vocab]: each option's first token
    # logprobs[o, k]: option o's k-th token's log-probability (zero past its end); greedy[o]: every token the argmax
    logprobs = torch.zeros(len(options), longest, dtype=first.dtype, device=device)
    logprobs[:, 0] = first[owner, tokens[:, 0]]
    greedy = first.argmax(-1)[owner] == tokens[:, 0]

    # The options' other tokens, longest first in groups of `batch` rows (little padding), each row on its item's
    # cached context (rows selected from the cache: a forward appends to the cache it is given).
    tails = sorted((o for o, (_, cont) in enumerate(options) if len(cont) > 1), key=lambda o: -len(options[o][1]))
    if tails:
        order = to_device([tails], device)[0]
    for start in range(0, len(tails), batch):
        rows = order[start:start + batch]
        span = len(options[tails[start]][1]) - 1
        mine = owner[rows]
        positions = length[mine][:, None] + torch.arange(span, device=device)  # each row's own context length on
        inside = torch.arange(span, device=device) < (count[rows] - 1)[:, None]
        cache = select_rows(returned_cache(out), mine, last_use=start + batch >= len(tails))
        logits = _forward(lm, input_ids=tokens[rows, :span] * inside, attention_mask=torch.cat([mask[mine], inside.long()], 1),
                          position_ids=positions, use_cache=True, **{cache_argument(lm.model): cache}).logits
        step = F.log_softmax(logits, dim=-1, dtype=softmax_dtype)
        target = tokens[rows, 1:span + 1]
        picked = step.gather(2, target[..., None]).squeeze(2)
        logprobs[rows, 1:span + 1] = torch.where(inside, picked, torch.zeros((), dtype=picked.dtype, device=device))
        greedy[rows] &= ((step.argmax(-1) == target) | ~inside).all(1)
    # one sum per option in the log-probabilities' dtype, as lm-eval sums (in bfloat16 the order shows)
    sums, flags = torch.stack([logprobs.sum(1).float(), greedy.float()]).tolist()
    scores = iter(zip(sums, (bool(g) for g in flags)))
    return [[next(scores) for _ in item.options] for item in chunk]


#: The fewest tokens worth a forward pass of their own: every context of a batch starting with fewer is forwarded
#: whole (a zero-shot prompt's short instruction gains less than the extra pass costs on a CPU).
MIN_SHARED_PREFIX = 32


def _shared_prefix(contexts: list[list[int]]) -> int:
    """How many leading tokens every context of a batch has in common, kept below the shortest context's length
    (each context keeps a token of its own, whose logits predict its options), or 0 when fewer than
    :data:`MIN_SHARED_PREFIX` or the batch has one item. The prefix is read from the token ids themselves, so
    a tokeniser that merges across the demonstrations' end changes nothing: the shared tokens are the same ids
    in the same positions, and causal attention gives them the same keys and values in every row."""
    if len(contexts) < 2:
        return 0
    first, most = contexts[0], min(map(len, contexts)) - 1
    n = 0
    while n < most and all(context[n] == first[n] for context in contexts):
        n += 1
    return n if n >= MIN_SHARED_PREFIX else 0


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
