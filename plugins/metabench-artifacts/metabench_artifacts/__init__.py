"""Artifact baselines after Boisson et al. (EMNLP 2023): input views, split regimes, artifact-controlled sampling.

- ``views``: what a model sees of an expression-level item (``default``, ``pme_only``, ``masked``).
- ``regimes``: deterministic original / random / lexical fold assignment and the paper's deduplication.
- ``recipes`` + ``datasets``: the Boisson datasets as registered datasets taking ``regime``/``fold``/``seed``.
- ``sampling``: the VUAC_BO artifact-controlled sampler for any token-level corpus.
- ``metrics``: model-free diagnostics (majority-class accuracy, collision ceiling).
- ``report``: the gameability flag, the paper-layout tables, the leaderboard section and the docs tables
  (floor 6: it reads stored runs); ``commands``: the ``metabench artifacts`` verbs (floor 7).
"""
