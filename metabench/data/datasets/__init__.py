"""Dataset families: one module per family, each with ``specs()``, its loaders and its count checks."""
