"""A tiny random BERT built in code (no files, no hub): WordPiece over an in-code vocabulary, 2 layers, hidden 64."""

from __future__ import annotations

from pathlib import Path

WORDS = (
    "the a an of to in is was he she it they we you i and or but not this that with for on at by from as be "
    "have has had do does did will would can could time life love war heart mind money idea ideas grasp grasped "
    "attack attacked argument arguments defend defended position positions point points bright brilliant dark "
    "future past cold warm light heavy fall fell rise rose price prices market markets economy storm storms "
    "sea river mountain road journey path cat dog house car water fire eat ate drink run ran walk walked "
    "said says man woman child children world day night year years good bad new old big small high low "
    "metaphor literal sentence word words trade plan plans support surge force forces great lead reach"
).split()
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
CHARS = "abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"()-áéíóúñ"


def vocabulary() -> list[str]:
    vocab = list(SPECIALS) + list(WORDS) + list(CHARS) + ["##" + c for c in CHARS] + ["##s", "##ed", "##ing"]
    return list(dict.fromkeys(vocab))  # no duplicates: a duplicate would leave an id past vocab_size


def build_tiny_bert(folder: Path, *, layers: int = 2, hidden: int = 64, max_positions: int = 128) -> Path:
    """Save a randomly initialised BERT (seeded, so every build is identical) with its tokenizer to ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = vocabulary()
    ids = {token: i for i, token in enumerate(vocab)}
    tok = Tokenizer(models.WordPiece(vocab=ids, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=False, clean_text=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    tok.decoder = decoders.WordPiece()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", model_max_length=max_positions,
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )
    fast.save_pretrained(str(folder))
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
        intermediate_size=hidden * 2, max_position_embeddings=max_positions, type_vocab_size=2,
    )
    torch.manual_seed(1234)
    model = BertModel(config)
    model.save_pretrained(str(folder))
    return folder
