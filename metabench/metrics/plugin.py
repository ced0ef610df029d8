"""Registers the built-in metrics by name.

Targets are ``"module:function"`` strings, so importing this module (``metabench ls``, ``--help``) imports
nothing numeric; each metric module is imported the first time one of its metrics is resolved.
"""

from __future__ import annotations

from metabench.hookspecs import register_each

_C = "metabench.metrics.classification"
_T = "metabench.metrics.tagging"
_R = "metabench.metrics.ranking"

# name -> (target, description). Every metric here is higher-is-better.
METRICS: dict[str, tuple[str, str]] = {
    # classification: golds/preds are label sequences
    "accuracy": (f"{_C}:accuracy", "fraction of items whose prediction equals the gold label"),
    "precision": (f"{_C}:precision", "precision of the class given by positive= (required); 0/0 = 0"),
    "recall": (f"{_C}:recall", "recall of the class given by positive= (required); 0/0 = 0"),
    "f1": (f"{_C}:f1", "F1 of the class given by positive= (required); 0/0 = 0"),
    "macro_f1": (
        f"{_C}:macro_f1",
        "unweighted mean of per-class F1 over labels= or, by default, the union of gold and predicted labels",
    ),
    "per_class": (
        f"{_C}:per_class",
        "per_class/<label>/{precision,recall,f1,support} for labels= or gold ∪ predicted labels",
    ),
    # tagging: golds/preds are sequences of word-level tag sequences (BIO, IO or plain labels)
    "span_precision": (f"{_T}:span_precision", "seqeval-compatible span precision of positive= (METAPHOR)"),
    "span_recall": (f"{_T}:span_recall", "seqeval-compatible span recall of positive= (METAPHOR)"),
    "span_f1": (f"{_T}:span_f1", "seqeval-compatible span F1 of positive= (METAPHOR): exact span and type match"),
    "token_precision": (f"{_T}:token_precision", "word-level precision of positive= (METAPHOR)"),
    "token_recall": (f"{_T}:token_recall", "word-level recall of positive= (METAPHOR)"),
    "token_f1": (f"{_T}:token_f1", "word-level F1 of positive= (METAPHOR) over all words"),
    "inv_f1": (
        f"{_T}:inv_f1",
        "word-level F1 on test words whose form is in train_vocab (training metaphors); needs words=, "
        "train_vocab=; normalise= exact|lower|lower_strip_punct (default exact)",
    ),
    "oov_f1": (
        f"{_T}:oov_f1",
        "word-level F1 on test words whose form is not in train_vocab; needs words=, train_vocab=; "
        "normalise= exact|lower|lower_strip_punct (default exact)",
    ),
    # ranking (generation): golds are acceptable-answer sets, preds ranked candidate lists
    "mrr": (f"{_R}:mrr", "mean reciprocal rank of the first acceptable candidate (0 if none); normalise= (lower)"),
    "recall_at_k": (
        f"{_R}:recall_at_k",
        "k= (required); mode=any: an acceptable answer in the top k; mode=fraction: share of answers in "
        "the top k; normalise= (lower)",
    ),
    "accuracy_at_1": (
        f"{_R}:accuracy_at_1", "share of items whose top candidate is acceptable; normalise= (lower)"
    ),
}


metabench_register_metrics = register_each(METRICS)
