"""``metabench explore``: a local page of a run's per-item answers beside the items' text (join.py builds the
rows, page.py writes the page, commands.py is the CLI verb)."""
