"""Built-in metrics: plain functions ``fn(golds, preds, **args) -> float | dict[str, float]``.

Kept free of sklearn and seqeval at run time (they are test-only references that the tests prove these
functions equal to), so that scoring never depends on a heavyweight package's version or warnings.
Modules: ``classification`` (accuracy, P/R/F1, macro F1, per class), ``tagging`` (seqeval-style span F1,
token F1, in-/out-of-vocabulary F1, per-sentence counts for bootstrapping) and ``ranking`` (MRR,
recall@k, accuracy@1 for generation). ``plugin`` registers them by name with lazy string targets.
"""
