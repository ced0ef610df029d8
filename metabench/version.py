"""metabench's version, in a module of its own: run records, caches and plugins read it without importing the
package root (whose lazy Python API would otherwise sit in every importer's graph)."""

__version__ = "0.1.0"
