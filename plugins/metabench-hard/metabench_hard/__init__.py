"""Hard metaphors after Li, Guerin & Lin ("Finding Challenging Metaphors that Confuse Pretrained Language Models").

The pipeline, one module per step (docs/hard-metaphors.md has every choice and its source):

- :mod:`.overlap`: the overlap ratio phi = s/k of each instance among the instances of its word (pure numpy);
- :mod:`.sor`: sense-only representations, a contrastive fine-tuning of any HF encoder on SemCor senses;
- :mod:`.pool`: the sense-annotated instance pool (SemCor + Raganato sets) and MOH's metaphorical senses;
- :mod:`.mine`: HARD(M) = metaphorical-sense instances with phi < xi plus their nearest literal negatives,
  built once per model and registered as the derived dataset ``hard_metaphors``;
- :mod:`.vua_phi`: phi of VUA-Verb test items, to break any VUA-Verb detection run down by hardness;
- :mod:`.gap`: the HARD-vs-VUA precision/recall gap with the paper's unpaired tests;
- :mod:`.fidelity`: our phi against the authors' own phi on ``hmd_proxy``.

Above the pipeline: :mod:`.report` (the breakdown of runs by phi, the leaderboard's hardness section, the docs
tables) and :mod:`.commands` (the ``metabench hard`` verbs), reached only through ``plugin.py``'s registrations.
A plugin distribution (plugins/metabench-hard): it imports metabench only through ``metabench.plugin_api``.
"""
