"""Registers the built-in model adapters (lazy targets: nothing heavy is imported here)."""

from ..hookspecs import hookimpl


@hookimpl
def metabench_register_models(register):
    register("majority", "metabench.models.baselines:Majority", description="majority training label")
    register("random", "metabench.models.baselines:RandomBaseline", description="seeded random label (strategy=uniform|prior)")
    register("constant", "metabench.models.baselines:Constant", description="a given label (label=...) or option (index=...)")
    register("lookup", "metabench.models.baselines:Lookup", description="majority training label of an identical input")
