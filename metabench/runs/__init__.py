"""Stored runs read back: found on disk (`stored`), paired item by item (`align`), metrics rebuilt from their
samples (`decompose`, `clusters`) and verified against their own files and the data (`verify`, `verify_data`).

Every report, the Python API and the family commands read runs through here; this package sits below
``report/`` (docs/architecture.md, floor 4), so code beneath the reports can read runs too."""
