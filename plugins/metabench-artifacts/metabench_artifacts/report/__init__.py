"""The construction-artifacts family's reports: Boisson et al.'s tables, the gameability flag, its leaderboard
section and its generated docs tables.

Floor 6 (docs/architecture.md): it reads stored runs like ``report/`` does and is reached only through the
registrations in ``artifacts/plugin.py`` (paper views, a board section, docs blocks), as a third party's
report code would be.
"""
