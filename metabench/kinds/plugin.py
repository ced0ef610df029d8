"""Registers the built-in kinds."""

from ..hookspecs import hookimpl


@hookimpl
def metabench_register_kinds(register):
    register("tagging", "metabench.kinds.tagging:Tagging", description="one label per word (BIO)")
    register("classification", "metabench.kinds.classification:Classification", description="one label per text or pair")
    register("choice", "metabench.kinds.choice:Choice", description="pick a continuation by log-likelihood (decoders)")
    register("generation", "metabench.kinds.generation:Generation", description="generate, parse and score (decoders)")


@hookimpl
def metabench_register_metrics(register):
    register("confusion_counts", "metabench.kinds.choice:confusion_counts",
             description="count of every (gold, predicted) pair: confusion_counts/<gold>/<pred>; labels= for the full matrix")
    register("munch_table9", "metabench.kinds.choice:munch_table9",
             description="MUNCH Table 9: expected answer type (apt+inapt, apt+apt, inapt+inapt) x predicted letter")
