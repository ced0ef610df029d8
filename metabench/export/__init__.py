"""Exports of metabench tasks to other harnesses (``metabench export lm-eval OUTDIR``)."""
