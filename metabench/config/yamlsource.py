"""Safe YAML loading that remembers where every key came from.

The task loader reports errors as ``file:line``; plain ``yaml.safe_load`` loses positions. Here the text is
composed into nodes by PyYAML's safe loader (no tags that build objects, no code), converted to plain
Python, and every key path is mapped to the file and line of its key.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .. import limits
from ..bounded_read import read_text
from ..errors import ConfigError

KeyPath = tuple
# libyaml's parser when PyYAML was built with it (10x faster); the pure-Python one otherwise. Both safe.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CONSTRUCTOR = yaml.SafeLoader("")


@dataclass
class Located:
    """A parsed YAML document and the (file, line) of each key path in it."""

    data: object
    lines: dict[KeyPath, tuple[str, int]] = field(default_factory=dict)

    def where(self, path: KeyPath, default_file: str) -> str:
        """'file:line' of the longest prefix of ``path`` that has a recorded position."""
        for cut in range(len(path), -1, -1):
            hit = self.lines.get(tuple(path[:cut]))
            if hit:
                return f"{hit[0]}:{hit[1]}"
        return default_file


def load_located(path: Path) -> Located:
    """Parse one YAML file safely, with positions. Syntax errors name the file, line and column.

    A file included by many tasks (a shared ``_base.yaml``) is parsed once per process and version.
    """
    try:
        stamp = path.stat().st_mtime_ns
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    cached = _parsed.get(path)
    if cached is None or cached[0] != stamp:
        cached = (stamp, _parse(path))
        _parsed[path] = cached
    return Located(copy.deepcopy(cached[1].data), dict(cached[1].lines))


_parsed: dict[Path, tuple[int, Located]] = {}


def _parse(path: Path) -> Located:
    text = _read(path)
    try:
        _check_nesting(text, path)
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        if "nesting depth" in problem:  # libyaml's own cap (1000 levels), met before the event stream reaches ours
            raise _too_deep(f"{path}:{mark.line + 1}" if mark else str(path)) from None
        raise ConfigError(f"{where}: invalid YAML: {problem}", hint="check indentation and quoting") from None
    located = Located(data=None)
    budget = _Budget(int(limits.YAML_NODES.value), int(limits.YAML_DEPTH.value))
    located.data = _convert(node, (), str(path), located.lines, budget) if node is not None else {}
    located.lines[()] = (str(path), 1)
    return located


def _read(path: Path) -> str:
    try:
        return read_text(path, error=ConfigError, limit=limits.YAML_BYTES)
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a YAML file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc})", hint="save the file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _check_nesting(text: str, path: Path) -> None:
    """Refuse deep nesting from the event stream (iterative) before composing: the C composer recurses per
    level and a file of 100,000 ``[`` crashes the interpreter instead of raising.

    libyaml (PyYAML >= 6.0.4) has a nesting cap of its own whose scanner may refuse a file before the 51st
    event reaches the count here, with its own wording. So when the fast parser refuses a file, the count is
    taken again with the pure-Python parser, which has no cap: a file nested deeper than metabench's limit is
    then always reported under that limit's name and variable, whatever the parser version says first.
    """
    try:
        _count_depth(text, path, _LOADER)
    except yaml.YAMLError:
        if _LOADER is not yaml.SafeLoader:
            _count_depth(text, path, yaml.SafeLoader)
        raise


def _count_depth(text: str, path: Path, loader: type) -> None:
    cap, depth = int(limits.YAML_DEPTH.value), 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > cap:
                raise _too_deep(f"{path}:{event.start_mark.line + 1}")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _too_deep(where: str) -> ConfigError:
    cap = int(limits.YAML_DEPTH.value)
    return ConfigError(f"{where}: nested more than {cap} levels deep", hint=f"flatten the structure, or raise {limits.YAML_DEPTH.env}")


class _Budget:
    """Values converted so far: an alias is expanded each time it is used, so ``&a [*b, *b, ...]`` chains
    (the "billion laughs") grow exponentially; counting every converted value bounds them."""

    def __init__(self, nodes: int, depth: int):
        self.left, self.depth = nodes, depth
        self.nodes = nodes

    def spend(self, node: yaml.Node, file: str, depth: int) -> None:
        self.left -= 1
        if self.left < 0:
            raise ConfigError(
                f"{file}:{node.start_mark.line + 1}: more than {self.nodes:,} values after expanding aliases "
                f"(a YAML alias bomb?)",
                hint=f"task files are small; remove the nested aliases, or raise {limits.YAML_NODES.env}",
            )
        if depth > self.depth:
            raise ConfigError(
                f"{file}:{node.start_mark.line + 1}: nested more than {self.depth} levels deep (a recursive alias?)",
                hint=f"flatten the structure, or raise {limits.YAML_DEPTH.env}",
            )


_PLAIN_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("map", "seq", "str", "int", "float", "bool", "null")}


def _convert(node: yaml.Node, path: KeyPath, file: str, lines: dict, budget: _Budget) -> object:
    budget.spend(node, file, len(path))
    if node.tag not in _PLAIN_TAGS:
        raise ConfigError(
            f"{file}:{node.start_mark.line + 1}: invalid YAML: the tag '{node.tag}' is not allowed",
            hint="task files hold plain values only; name callables by their registered names",
        )
    if isinstance(node, yaml.MappingNode):
        out: dict = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConfigError(f"{file}:{key_node.start_mark.line + 1}: keys must be plain names")
            key = _scalar(key_node)
            if key in out:
                raise ConfigError(
                    f"{file}:{key_node.start_mark.line + 1}: key '{key}' appears twice",
                    hint="remove one of them: YAML would silently keep the last",
                )
            lines[path + (key,)] = (file, key_node.start_mark.line + 1)
            out[key] = _convert(value_node, path + (key,), file, lines, budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        result = []
        for index, child in enumerate(node.value):
            lines[path + (index,)] = (file, child.start_mark.line + 1)
            result.append(_convert(child, path + (index,), file, lines, budget))
        return result
    return _scalar(node)


def _scalar(node: yaml.ScalarNode) -> object:
    value = _CONSTRUCTOR.construct_object(node, deep=True)
    _CONSTRUCTOR.constructed_objects.pop(node, None)  # the shared constructor keeps no memory of nodes
    return value
