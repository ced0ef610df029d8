"""Reports read only stored runs (through ``metabench.runs``): ``compare``, the CI gate (``gate/``), the docs
generators (``docs/``), the analyses (``analyses/``), the leaderboard (``leaderboard/``) and the local per-item
page (``explore/``). CONTRIBUTING.md says where a new one goes."""
