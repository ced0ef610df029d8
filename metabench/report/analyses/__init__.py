"""The analyses: what the runs say beyond a ranking, each a module of functions over stored runs (``Run``) that a
``compare`` verb, the leaderboard or a docs block prints. ``gaps`` subset gaps; ``paired_variants`` the paired
metaphor effect of original vs paraphrased items; ``surface`` per-item surface features and ``controls`` the
regression on them; ``metaphor_effects`` the gaps page's paired and controlled rows; ``power_plan`` ``metabench
power``; ``seed_stability`` the rule for a run degenerate across seeds. CONTRIBUTING.md, "Add an analysis"."""
