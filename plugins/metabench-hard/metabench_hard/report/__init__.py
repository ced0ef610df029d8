"""The hard family's reports: breakdowns by phi, its leaderboard section and its generated docs tables.

Floor 6 (docs/architecture.md): it reads stored runs like ``report/`` does and is reached only through the
registrations in ``hard/plugin.py`` (a board section, docs blocks), as a third party's report code would be.
"""
