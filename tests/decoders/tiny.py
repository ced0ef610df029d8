"""Tiny random decoders built in-process (GPT-2, and Llama; byte-level BPE trained on a few lines, 2 layers of
width 64), saved with ``save_pretrained`` so that lm-eval's HFLM loads it like any local model folder."""

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


def _tokenizer(chat: bool):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

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
    return fast, tok.get_vocab_size(), tok.token_to_id("<|endoftext|>")


def build_tiny_gpt2(folder: Path, *, chat: bool = False, seed: int = 0, initializer_range: float = 0.02) -> Path:
    """A tiny random GPT-2 (absolute positions); a wider ``initializer_range`` than transformers' 0.02 makes its
    answers depend sharply on every position and token (a test of positions then sees an off-by-one)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    fast, vocab, eot = _tokenizer(chat)
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=vocab, n_positions=512, n_embd=64, n_layer=2, n_head=2,
                        bos_token_id=eot, eos_token_id=eot, pad_token_id=eot, initializer_range=initializer_range)
    return _save(GPT2LMHeadModel(config), fast, folder)


def build_tiny_llama(folder: Path, *, seed: int = 0, max_positions: int = 512,
                     initializer_range: float = 0.02) -> Path:
    """A tiny random Llama (rotary positions, grouped key/value heads): the architecture of SmolLM2 (a wider
    ``initializer_range``: see :func:`build_tiny_gpt2`)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    fast, vocab, eot = _tokenizer(False)
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=max_positions,
                         bos_token_id=eot, eos_token_id=eot, pad_token_id=eot, initializer_range=initializer_range)
    return _save(LlamaForCausalLM(config), fast, folder)


def _save(model, tokenizer, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
