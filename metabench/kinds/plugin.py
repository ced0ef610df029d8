"""Registers the built-in kinds."""

from ..hookspecs import hookimpl


@hookimpl
def metabench_register_kinds(register):
    register("tagging", "metabench.kinds.tagging:Tagging", description="one label per word (BIO)")
    register("classification", "metabench.kinds.classification:Classification", description="one label per text or pair")
