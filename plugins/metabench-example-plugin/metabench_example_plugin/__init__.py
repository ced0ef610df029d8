"""An example metabench plugin (see plugin.py)."""
