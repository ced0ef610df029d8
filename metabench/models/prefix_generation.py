"""Greedy generation that forwards the prompt prefix a batch shares once, and drops each row as it finishes.

lm-eval's ``HFLM.generate_until`` left-pads a batch and runs ``model.generate`` over every row's whole prompt, and
keeps every row in the batch until the last one stops. A generated protocol's prompts are mostly the same tokens:
the chat template's system turn and the task's instruction (about 75 of the ~105 tokens of a VUA-18 list prompt
with SmolLM2's template; with k demonstrations, far more), and on a CPU the prompt's forward pass is most of the
cost. ``hf-decoder``'s ``share_prompt=true`` (the default) answers greedy ``GenerateRequest`` here instead:

1. the contexts are tokenised as lm-eval's ``tok_batch_encode`` would (its special-token rule), ordered as its
   ``Collator`` orders them (longest first) and cut into batches of its batch size;
2. the tokens every context of a batch starts with are forwarded once and their key/value cache shared by the
   batch's rows (:func:`metabench.models.prompt_sharing._shared_prefix`, at least 32 tokens, each row keeping a
   token of its own); the rest of each context is forwarded right-padded, positions continuing the prefix, the
   padding masked out;
3. each step appends the argmax token of every unfinished row; a row finishes at an end-of-sequence id, when its
   decoded text holds a stop string (lm-eval's ``until`` plus the end-of-text string), or at ``max_gen_toks``;
   finished rows leave the batch (their cache rows are dropped), so a batch costs its own answers' lengths, not
   its longest one's on every row;
4. the text is lm-eval's: the new tokens decoded without special tokens, cut at the first stop string
   (``postprocess_generated_text``).

Greedy answers are lm-eval's up to floating-point order (other batch shapes and attention kernels): a near-tie
between two tokens can fall the other way, which is why the fingerprint names this path. Left to lm-eval
(``None``): sampling (``temperature > 0``), a context longer than the window allows, a seq2seq model, a model
with a thinking-token setting, or one whose generation config asks for more than plain greedy decoding
(a repetition penalty, banned words, a minimum length...): those are ``model.generate``'s logits processors.
"""

from __future__ import annotations

from ..requests import GenerateRequest
from .kv_cache import cache_argument, returned_cache, select_rows
from .prompt_sharing import _forward, _shared_prefix, to_device

#: Generation-config fields that do not change what greedy decoding picks (ids, caching, sampling knobs greedy
#: ignores, bookkeeping); any other set field is a logits processor this path does not apply.
PLAIN_GREEDY_FIELDS = frozenset({
    "bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id", "use_cache", "transformers_version",
    "_from_model_config", "output_attentions", "output_hidden_states", "return_dict_in_generate", "output_scores",
    "output_logits", "do_sample", "temperature", "top_k", "top_p", "min_p", "typical_p", "max_length",
    "max_new_tokens", "num_return_sequences", "cache_implementation",
})


def plain_greedy(lm) -> bool:
    """Whether ``lm``'s model would decode greedily with no logits processor (what this path reproduces)."""
    if getattr(lm, "backend", "causal") != "causal" or getattr(lm, "think_end_token", None) is not None:
        return False
    config = getattr(lm.model, "generation_config", None)
    if config is None:
        return True
    set_fields = set(config.to_diff_dict()) if hasattr(config, "to_diff_dict") else set()
    return set_fields <= PLAIN_GREEDY_FIELDS and int(getattr(config, "num_beams", 1) or 1) == 1


def shared_prefix_generate(lm, contexts: list[str], request: GenerateRequest, batch: int) -> list[str | None]:
    """Greedy answers to ``contexts`` (already in the chat template, if any) under ``request``'s stop strings and
    token limit, with lm-eval's HFLM ``lm``'s model and tokeniser; ``None`` for a context left to lm-eval."""
    from lm_eval.models.utils import handle_stop_sequences

    eos_text = lm.tok_decode(lm.eot_token_id, skip_special_tokens=False)
    stops = handle_stop_sequences(list(request.until), eos=eos_text)
    limit = int(request.max_new_tokens)
    room = lm.max_length - limit
    encoded = [(_encode(lm, context), index, context) for index, context in enumerate(contexts)]
    kept = [(ids, index, context) for ids, index, context in encoded if ids and len(ids) <= room]
    kept.sort(key=lambda row: (-len(row[0]), row[2]))  # lm-eval's Collator order: longest first, then the text
    out: list[str | None] = [None] * len(contexts)
    for start in range(0, len(kept), batch):
        chunk = kept[start:start + batch]
        for (_, index, _), text in zip(chunk, _generate(lm, [ids for ids, _, _ in chunk], stops, limit),
                                       strict=True):
            out[index] = text
    return out


def _encode(lm, context: str) -> list[int]:
    """The context's ids as lm-eval's ``tok_batch_encode`` gives them (its special-token rule, no padding)."""
    ids, mask = lm.tok_batch_encode([context])
    return [int(i) for i, m in zip(ids[0].tolist(), mask[0].tolist()) if m]


def _eos_ids(lm) -> set[int]:
    """The ids that end a row: the generation config's end-of-sequence ids and the tokeniser's."""
    ids: set[int] = set()
    config = getattr(lm.model, "generation_config", None)
    for value in (getattr(config, "eos_token_id", None), lm.tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif value:
            ids.update(int(v) for v in value)
    return ids


def _generate(lm, rows: list[list[int]], stops: list[str], limit: int) -> list[str]:
    """One batch: the shared prefix once, each row's rest once, then one token per unfinished row per step."""
    import torch

    from lm_eval.models.utils import postprocess_generated_text

    device = lm.device
    cache_name = cache_argument(lm.model)
    shared = _shared_prefix(rows)
    lengths = [len(row) for row in rows]
    width = max(lengths) - shared
    ids = to_device([row[shared:] + [0] * (shared + width - len(row)) for row in rows], device)
    length = to_device([lengths], device)[0]
    mask = torch.cat([torch.ones(len(rows), shared, dtype=torch.long, device=device),
                      (shared + torch.arange(width, device=device) < length[:, None]).long()], 1)
    extra = {}
    if shared:
        head = _forward(lm, input_ids=to_device([rows[0][:shared]], device), use_cache=True, logits_to_keep=1)
        zeros = torch.zeros(len(rows), dtype=torch.long, device=device)
        extra = {cache_name: select_rows(returned_cache(head), zeros, last_use=True)}
    positions = (shared + torch.arange(width, device=device)).expand(len(rows), -1)
    keep_at = sorted({n - shared - 1 for n in lengths})  # only each row's last position goes through the head
    where = to_device([[keep_at.index(n - shared - 1) for n in lengths]], device)[0]
    out = _forward(lm, input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                   logits_to_keep=to_device([keep_at], device)[0], **extra)
    last = out.logits[torch.arange(len(rows), device=device), where]
    cache = returned_cache(out)
    eos = _eos_ids(lm)
    new: list[list[int]] = [[] for _ in rows]
    active = list(range(len(rows)))  # rows still generating, in the cache's row order
    for step in range(limit):
        picked = last.argmax(-1).tolist()
        still = []
        for slot, (row, token) in enumerate(zip(active, picked, strict=True)):
            new[row].append(token)
            text = lm.tokenizer.decode(new[row], skip_special_tokens=False)
            if token not in eos and not any(stop and stop in text for stop in stops):
                still.append(slot)
        if not still or step == limit - 1:
            break
        keep = to_device([still], device)[0]
        if len(still) < len(active):
            cache = select_rows(cache, keep, last_use=True)
            mask = mask[keep]
            length = length[keep]
        active = [active[slot] for slot in still]
        mask = torch.cat([mask, torch.ones(len(active), 1, dtype=torch.long, device=device)], 1)
        tokens = to_device([[new[row][-1]] for row in active], device)
        out = _forward(lm, input_ids=tokens, attention_mask=mask, position_ids=(length + step)[:, None],
                       use_cache=True, **{cache_name: cache})
        cache = returned_cache(out)
        last = out.logits[:, -1]
    return [postprocess_generated_text(lm.tok_decode(tokens), stops, None) for tokens in new]
