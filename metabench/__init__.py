"""metabench: a plugin-based benchmark suite for metaphor processing in language models."""

__version__ = "0.1.0"
