"""``metabench report docs``: the generated results tables in docs/. ``blocks.py`` finds the blocks in the pages
and regenerates them (``DocsContext``, ``markdown``, ``names``, ``REDUCED``: what a plugin's docs block uses); the
other modules are the docs blocks that belong to no paper family (registered in ``report/plugin.py``)."""
