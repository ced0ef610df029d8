"""The data layer: dataset specs, file resolution, readers, loaders and items."""

from .spec import DataFile, DatasetSpec

__all__ = ["DataFile", "DatasetSpec"]
