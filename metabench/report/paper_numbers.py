"""The papers' own numbers, as printed, shown beside metabench's runs in the paper-layout views.

Copied from the structured extractions in ``shared/papers`` (meta4xnli.md §4, munch.md §4), which copy the
papers' tables. Keys: table key -> the paper's model name -> row label -> the row's cells in the view's
column order, separated by ``|``. Cells are written as printed: ``67.17 ± 0.72`` (Meta4XNLI: mean ± std of 5
runs, in percent), ``.28 (.18)`` (MUNCH: mean (SD) over 3 prompts, as a fraction), ``–`` for no value.
"""

from __future__ import annotations

PAPER_NUMBERS: dict[str, dict[str, dict[tuple[str, ...], str]]] = {
    # Meta4XNLI Table 11 / C.2: monolingual detection, encoders, 5 runs. Columns F1 | Inv | Oov | P | R.
    "meta4xnli_table_11": {
        "mDeBERTa": {
            ("M4X_ES", "M4X_ES"): "67.17 ± 0.72 | 71.89 ± 1.48 | 60.41 ± 2.41 | 73.60 ± 5.38 | 62.24 ± 4.38",
            ("M4X_ES", "CoMeta"): "55.62 ± 0.61 | 61.95 ± 1.82 | 47.70 ± 2.90 | 61.14 ± 5.05 | 51.53 ± 4.32",
            ("M4X_EN", "M4X_EN"): "58.02 ± 0.95 | 60.94 ± 0.78 | 50.86 ± 2.15 | 65.82 ± 2.83 | 52.09 ± 3.00",
            ("M4X_EN", "VUAM"): "29.14 ± 1.63 | 26.45 ± 1.73 | 36.86 ± 2.07 | 76.69 ± 1.84 | 18.02 ± 1.37",
        },
        "XLM-R": {
            ("M4X_ES", "M4X_ES"): "66.84 ± 0.87 | 70.78 ± 0.83 | 61.24 ± 1.34 | 73.29 ± 2.35 | 61.59 ± 3.17",
            ("M4X_ES", "CoMeta"): "56.24 ± 1.28 | 62.48 ± 1.94 | 48.60 ± 1.07 | 59.32 ± 1.75 | 53.57 ± 2.74",
            ("M4X_EN", "M4X_EN"): "59.24 ± 1.00 | 61.04 ± 1.21 | 55.30 ± 1.08 | 63.70 ± 3.40 | 56.31 ± 4.19",
            ("M4X_EN", "VUAM"): "32.42 ± 2.68 | 29.14 ± 2.32 | 41.55 ± 3.03 | 76.70 ± 3.08 | 20.68 ± 2.48",
        },
    },
    # Meta4XNLI Table 12 / C.3: monolingual detection, decoders fine-tuned with constrained decoding, one fixed
    # seed. Columns F1 | Inv | Oov | P | R.
    "meta4xnli_table_12": {
        "Llama-3.1-8B-Instruct": {
            ("M4X_ES", "M4X_ES"): "59.15 | 63.77 | 53.03 | 59.11 | 59.19",
            ("M4X_ES", "CoMeta"): "50.06 | 56.55 | 42.74 | 53.56 | 46.99",
            ("M4X_EN", "M4X_EN"): "50.41 | 53.58 | 44.57 | 53.68 | 47.52",
            ("M4X_EN", "VUAM"): "26.78 | 22.31 | 38.47 | 61.68 | 17.10",
        },
        "Qwen2.5-7B-Instruct": {
            ("M4X_ES", "M4X_ES"): "56.76 | 62.86 | 48.61 | 65.98 | 49.80",
            ("M4X_ES", "CoMeta"): "44.26 | 53.79 | 33.23 | 53.07 | 37.96",
            ("M4X_EN", "M4X_EN"): "47.66 | 51.37 | 41.63 | 44.79 | 50.92",
            ("M4X_EN", "VUAM"): "26.44 | 21.37 | 40.39 | 59.72 | 16.98",
        },
        "GEMMA-7b-it": {
            ("M4X_ES", "M4X_ES"): "58.06 | 63.33 | 51.17 | 65.47 | 52.15",
            ("M4X_ES", "CoMeta"): "45.32 | 57.78 | 36.42 | 52.60 | 39.81",
            ("M4X_EN", "M4X_EN"): "52.61 | 56.37 | 45.97 | 55.50 | 50.00",
            ("M4X_EN", "VUAM"): "26.72 | 22.13 | 38.94 | 70.19 | 16.50",
        },
    },
    # Meta4XNLI Table 13 / C.4: multilingual detection (train ES+EN). Encoders 5 runs, decoders a fixed seed.
    # Columns ES F1 | ES Inv | ES Oov | ES P | ES R | EN F1 | EN Inv | EN Oov | EN P | EN R.
    "meta4xnli_table_13": {
        "mDeBERTa": {("M4X_ES+EN",): "68.70 ± 1.27 | 72.63 ± 1.23 | 63.03 ± 1.95 | 72.78 ± 3.45 | 65.29 ± 3.77 | "
                                    "60.80 ± 1.05 | 63.16 ± 1.38 | 55.12 ± 1.08 | 65.03 ± 2.08 | 57.23 ± 3.10"},
        "XLM-RoBERTa": {("M4X_ES+EN",): "66.01 ± 0.55 | 70.29 ± 1.18 | 59.84 ± 1.43 | 70.35 ± 4.42 | 62.53 ± 3.93 | "
                                       "60.14 ± 1.32 | 61.57 ± 1.14 | 56.79 ± 1.88 | 64.97 ± 2.81 | 56.15 ± 3.04"},
        "Llama-3.1-8B-Instruct": {("M4X_ES+EN",): "61.46 | 64.52 | 57.40 | 61.90 | 61.02 | 55.26 | 57.91 | 50.00 | 53.33 | 57.34"},
        "Qwen2.5-7B-Instruct": {("M4X_ES+EN",): "58.72 | 63.35 | 52.60 | 59.31 | 58.15 | 52.62 | 56.56 | 46.25 | 47.56 | 58.90"},
        "GEMMA-7b-it": {("M4X_ES+EN",): "57.02 | 64.38 | 47.08 | 64.89 | 50.85 | 54.60 | 56.65 | 50.56 | 57.79 | 51.74"},
    },
    # Meta4XNLI Table 14 / C.5: zero-shot cross-lingual detection, 5 runs. Columns F1 | P | R.
    "meta4xnli_table_14": {
        "mDeBERTa": {
            ("ES → EN",): "37.78 ± 4.35 | 71.10 ± 4.43 | 26.09 ± 5.15",
            ("EN → ES",): "56.41 ± 3.05 | 62.69 ± 3.51 | 51.63 ± 5.39",
        },
        "XLM-R": {
            ("ES → EN",): "39.90 ± 2.20 | 69.77 ± 2.22 | 28.02 ± 2.50",
            ("EN → ES",): "58.94 ± 1.32 | 60.20 ± 6.14 | 58.77 ± 6.66",
        },
    },
    # Meta4XNLI Table 15: NLI accuracy of encoders fine-tuned on MultiNLI, single run. Columns EN | ES.
    "meta4xnli_table_15": {
        "mDeBERTa": {
            ("XNLI_dev", "metaphor"): "86.85 | 85.12",
            ("XNLI_dev", "no metaphor"): "87.72 | 85.39",
            ("XNLI_test", "metaphor"): "85.02 | 82.27",
            ("XNLI_test", "no metaphor"): "87.74 | 85.40",
            ("esXNLI", "metaphor"): "74.60 | 78.31",
            ("esXNLI", "no metaphor"): "76.39 | 79.17",
            ("average", ""): "83.05 | 82.61",
        },
        "XLM-R": {
            ("XNLI_dev", "metaphor"): "86.50 | 86.85",
            ("XNLI_dev", "no metaphor"): "89.15 | 86.36",
            ("XNLI_test", "metaphor"): "86.40 | 85.20",
            ("XNLI_test", "no metaphor"): "88.04 | 84.80",
            ("esXNLI", "metaphor"): "74.33 | 77.78",
            ("esXNLI", "no metaphor"): "76.77 | 80.05",
            ("average", ""): "83.36 | 83.51",
        },
    },
    # Meta4XNLI Table 16: NLI accuracy of LLMs prompted in context, mean of 3 runs.
    # Columns zs EN | zs ES | chain EN | chain ES. The paper's average row does not follow from its cells.
    "meta4xnli_table_16": {
        "Llama-3.3-70B-Instruct": {
            ("XNLI_dev", "metaphor"): "70.70 | 67.82 | 77.05 | 79.12",
            ("XNLI_dev", "no metaphor"): "72.72 | 69.97 | 81.14 | 79.79",
            ("XNLI_test", "metaphor"): "73.39 | 70.80 | 82.42 | 80.00",
            ("XNLI_test", "no metaphor"): "72.44 | 67.37 | 80.55 | 78.71",
            ("esXNLI", "metaphor"): "72.05 | 74.34 | 76.02 | 80.78",
            ("esXNLI", "no metaphor"): "73.65 | 75.86 | 79.49 | 83.84",
            ("average", ""): "72.56 | 70.55 | 79.89 | 80.32",
        },
        "Qwen2.5-72B-Instruct": {
            ("XNLI_dev", "metaphor"): "82.47 | 80.85 | 84.31 | 83.73",
            ("XNLI_dev", "no metaphor"): "85.61 | 80.42 | 86.58 | 80.99",
            ("XNLI_test", "metaphor"): "83.10 | 80.74 | 85.97 | 80.34",
            ("XNLI_test", "no metaphor"): "84.47 | 80.50 | 87.75 | 81.99",
            ("esXNLI", "metaphor"): "73.10 | 84.13 | 79.19 | 83.33",
            ("esXNLI", "no metaphor"): "81.82 | 85.42 | 80.34 | 85.63",
            ("average", ""): "83.28 | 81.71 | 84.72 | 82.57",
        },
        "GPT-4o": {
            ("XNLI_dev", "metaphor"): "84.26 | 82.53 | 86.50 | 83.39",
            ("XNLI_dev", "no metaphor"): "87.04 | 81.88 | 86.76 | 82.74",
            ("XNLI_test", "metaphor"): "86.55 | 80.52 | 87.85 | 82.07",
            ("XNLI_test", "no metaphor"): "86.72 | 82.48 | 87.55 | 82.85",
            ("esXNLI", "metaphor"): "75.53 | 82.67 | 76.32 | 85.32",
            ("esXNLI", "no metaphor"): "81.50 | 85.26 | 81.57 | 86.52",
            ("average", ""): "84.61 | 82.54 | 85.44 | 83.62",
        },
    },
    # Meta4XNLI Table 17: NLI accuracy of encoders fine-tuned on Meta4XNLI, 5 runs. Columns EN | ES.
    "meta4xnli_table_17": {
        "mDeBERTa": {
            ("No Met", "Met"): "73.86 ± 3.10 | 73.38 ± 1.92",
            ("No Met", "No Met"): "75.65 ± 2.10 | 73.89 ± 1.11",
            ("All", "Met"): "75.78 ± 1.50 | 72.83 ± 1.24",
            ("All", "No Met"): "78.09 ± 0.56 | 75.92 ± 1.73",
            ("average", ""): "75.84 | 74.01",
        },
        "XLM-R": {
            ("No Met", "Met"): "77.21 ± 3.05 | 75.61 ± 1.30",
            ("No Met", "No Met"): "78.50 ± 2.80 | 77.13 ± 1.92",
            ("All", "Met"): "76.73 ± 2.88 | 76.57 ± 1.48",
            ("All", "No Met"): "79.31 ± 2.39 | 79.23 ± 1.73",
            ("average", ""): "77.94 | 77.13",
        },
    },
    # MUNCH Table 2: paraphrase judgement accuracy, mean (SD) across 3 prompts. One column: accuracy.
    "munch_table_2": {
        "LLaMA-13B": {
            ("Word-judge", "Implicit"): ".28 (.18)", ("Word-judge", "M-Sent"): ".30 (.16)",
            ("Word-judge", "M-Word"): ".33 (.18)", ("Sent-judge", "Implicit"): ".13 (.06)",
            ("Sent-judge", "M-Sent"): ".12 (.07)", ("Sent-judge", "M-Word"): ".10 (.08)",
        },
        "LLaMA-30B": {
            ("Word-judge", "Implicit"): ".21 (.10)", ("Word-judge", "M-Sent"): ".19 (.09)",
            ("Word-judge", "M-Word"): ".21 (.08)", ("Sent-judge", "Implicit"): ".14 (.03)",
            ("Sent-judge", "M-Sent"): ".17 (.03)", ("Sent-judge", "M-Word"): ".27 (.05)",
        },
        "GPT-3.5": {
            ("Word-judge", "Implicit"): ".23 (.10)", ("Word-judge", "M-Sent"): ".20 (.10)",
            ("Word-judge", "M-Word"): ".20 (.08)", ("Sent-judge", "Implicit"): ".17 (.07)",
            ("Sent-judge", "M-Sent"): ".16 (.06)", ("Sent-judge", "M-Word"): ".21 (.02)",
        },
    },
    # MUNCH Table 3: paraphrase generation, mean (SD) across 3 prompts. Columns MRR | Recall@5 | Recall@10
    # (GPT-3.5's API gave only the top 5, so it has no Recall@10).
    "munch_table_3": {
        "LLaMA-13B": {("all prompts",): ".33 (.02) | .22 (.02) | .33 (.02)"},
        "LLaMA-30B": {("all prompts",): ".47 (.03) | .28 (.02) | .40 (.03)"},
        "GPT-3.5": {("all prompts",): ".54 (.02) | .32 (.01) | –"},
    },
}
