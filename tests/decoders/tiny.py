"""A tiny random GPT-2 built in-process (byte-level BPE trained on a few lines, 2 layers of width 64),
saved with ``save_pretrained`` so that lm-eval's HFLM loads it like any local model folder."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "Choose the word(s) that can replace the highlighted word in the given sentence.",
    "Option A: covered Option B: cleaned Option C: Both Option A and Option B",
    "Option D: Neither Option A nor Option B Correct answer: Option",
    "No golden light bathed the red brick of the house.",
    "Say which is the inference relationship between these two sentences: entailment, neutral, contradiction.",
    "The headline is metaphorical or literal. Paraphrase: [blank] should be",
    "Mark's promotions and progress up the company ladder: hierarchy, steps, stairs.",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_tiny_gpt2(folder: Path, *, chat: bool = False, seed: int = 0) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                   pad_token="<|endoftext|>", unk_token="<|endoftext|>")
    if chat:
        fast.chat_template = CHAT_TEMPLATE
    eot = tok.token_to_id("<|endoftext|>")
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=512, n_embd=64, n_layer=2, n_head=2,
                        bos_token_id=eot, eos_token_id=eot, pad_token_id=eot)
    model = GPT2LMHeadModel(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder
