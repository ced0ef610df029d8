"""Reading one task or group file: includes, schema validation, errors with file:line.

``include:`` names one or more files relative to the including file; they are merged first (in order),
then the including file's own keys on top. Mappings merge key by key, everything else is replaced, so a
task can override one hyperparameter of a shared base. Cycles are detected and reported as a chain.

Includes are confined to task roots: the one the file comes from (the registered task folder of its plugin,
or the folder given to ``metabench validate``) and the other registered task folders, so a plugin may build
on a built-in ``_base.yaml``. A task file is input, and ``include: ../../etc/passwd`` must not read anything
else.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, did_you_mean
from .schema import GroupConfig, TaskConfig
from .yamlsource import Located, load_located

# Keys that do not change what a task computes: left out of the config hash.
_UNHASHED = ("tag",)


@dataclass
class RawConfig:
    """A file's content after includes, with positions, before validation."""

    path: Path
    data: dict
    located: Located

    def where(self, *keys) -> str:
        return self.located.where(tuple(keys), str(self.path))


def read_raw(path: Path, root: Path | None = None, _chain: tuple[Path, ...] = (), *,
             also: tuple[Path, ...] = ()) -> RawConfig:
    """A file with its includes merged; includes must stay inside ``root`` (default: the file's folder) or
    one of the folders in ``also`` (the registered task folders)."""
    path = path.resolve()
    root = (root or path.parent).resolve()
    if path in _chain:
        cycle = " -> ".join(str(p) for p in (*_chain, path))
        raise ConfigError(f"{_chain[-1]}: include cycle: {cycle}", hint="remove one of the includes in the cycle")
    located = load_located(path)
    data = located.data
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: a task file must be a mapping of keys (task:, kind:, ...)")
    includes = data.pop("include", None)
    if includes is None:
        return RawConfig(path, data, located)
    if isinstance(includes, str):
        includes = [includes]
    if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
        raise ConfigError(f"{located.where(('include',), str(path))}: include must be a file name or a list of them")
    merged: dict = {}
    merged_lines: dict = {}
    for index, name in enumerate(includes):
        target = (path.parent / name).resolve()
        line = located.where(("include", index) if len(includes) > 1 else ("include",), str(path))
        if not any(target.is_relative_to(r) for r in (root, *also)):
            raise ConfigError(
                f"{line}: include '{name}' escapes the task root {root} (it resolves to {target})",
                hint="include only files inside the task folder or another registered task folder, e.g. a "
                "shared _base.yaml beside the tasks",
            )
        if not target.is_file():
            siblings = [p.name for p in path.parent.glob("*.yaml")]
            raise ConfigError(
                f"{line}: included file '{name}' not found (looked for {target}){did_you_mean(name, siblings)}",
                hint="include paths are relative to the including file",
            )
        base = read_raw(target, root, (*_chain, path), also=also)
        merged = _merge(merged, base.data)
        merged_lines.update(base.located.lines)
    merged_lines.update(located.lines)
    return RawConfig(path, _merge(merged, data), Located(data=None, lines=merged_lines))


def _merge(base: dict, top: dict) -> dict:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def parse(raw: RawConfig) -> TaskConfig | GroupConfig:
    """Validate a raw config against the schema; errors name file:line, field and the closest valid key."""
    data = dict(raw.data)
    if isinstance(data.get("tag"), str):
        data["tag"] = [data["tag"]]
    if "group" in data and "kind" not in data:
        if isinstance(data.get("task"), str):
            data["task"] = [data["task"]]
        model: type[BaseModel] = GroupConfig
    elif "task" in data:
        model = TaskConfig
    else:
        raise ConfigError(f"{raw.path}:1: neither `task:` nor `group:` is set", hint="start the file with `task: <name>`")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise config_error(raw, model, exc) from None


def config_error(raw: RawConfig, model: type[BaseModel], exc: ValidationError, *,
                 hint: str = "the keys are documented in docs/task-yaml.md (`metabench schema`)") -> ConfigError:
    """A schema violation as ``file:line: problem`` lines (an unknown key with the closest valid one)."""
    problems = []
    errors = [(tuple(p for p in e["loc"] if not (isinstance(p, str) and _is_union_tag(p))), e) for e in exc.errors()]
    for loc, err in errors:
        if err["type"] in _TYPE_ERRORS and any(
                other is not err and other["type"] not in _TYPE_ERRORS and o_loc[: len(loc)] == loc
                for o_loc, other in errors):
            continue  # a union (count or list): the member the value was meant for says what is wrong
        where = raw.where(*loc)
        field = ".".join(str(p) for p in loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            parent = _model_at(model, loc[:-1])
            valid = list(parent.model_fields) if parent else []
            problems.append(
                f"{where}: unknown key '{field}'{did_you_mean(str(loc[-1]), valid)}"
                + (f"; valid keys here: {', '.join(valid)}" if valid else "")
            )
        elif err["type"] == "missing":
            problems.append(f"{where}: required key '{field}' is missing")
        else:
            problems.append(f"{where}: {field}: {err['msg']} (got {err.get('input')!r})")
    unique = list(dict.fromkeys(problems))
    return ConfigError("\n".join(unique[:5]), hint=hint)


_TYPE_ERRORS = {"int_type", "int_parsing", "list_type", "string_type", "float_type", "dict_type", "model_type"}


def _is_union_tag(part: str) -> bool:
    """pydantic inserts union member names (str, SplitRef, function-after[...]) into error locations."""
    return part in {"str", "int", "float", "list[int]", "SplitRef", "MetricSpec", "constrained-int", "SearchRange",
                    "IntRange"} or "[" in part


def _model_at(model: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    current: object = model
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        info = current.model_fields.get(part)
        if info is None:
            return None
        current = _inner_model(info.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _inner_model(annotation: object) -> object:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def config_hash(config: TaskConfig) -> str:
    """sha256 of the canonical JSON of everything that affects results (tags excluded)."""
    return dumped_config_hash(config.model_dump(mode="json"))


def dumped_config_hash(dumped: dict) -> str:
    """`config_hash` of a config as JSON: ``model_dump(mode="json")``, or the ``task.config`` a run records (which
    leaves out only keys the hash leaves out too), so that verification recomputes a run's hash from its record
    without validating it (a view's task name, ``task@view``, is no valid task name)."""
    payload = {key: value for key, value in copy.deepcopy(dumped).items() if key not in _UNHASHED}
    for key in ("views", "hf_dataset"):  # tasks without them hash as before the keys existed
        if payload.get(key) is None:
            payload.pop(key, None)
    protocol = payload.get("protocol") or {}
    for key in ("decoder", "decoder_generated", "decoder_finetune"):
        section = protocol.get(key)
        if isinstance(section, dict) and section.get("kind") is not None:
            # A section naming its own kind is a way for decoders to answer the task, not the task: leaving it out
            # keeps every other run's hash (runs of all model kinds pair), and the decoder's answer key carries
            # it instead (metabench.answering.answer_fingerprint), so an edited prompt never reuses answers.
            protocol[key] = None
        elif isinstance(section, dict):  # a task whose own kind is prompted (or a hashed tagger) hashes as before
            for field_name, empty in (("kind", None), ("kind_args", {}), ("prompt_source", "")):
                if section.get(field_name, empty) == empty:
                    section.pop(field_name, None)
    for key in ("decoder_finetune", "decoder_generated"):  # likewise a task no decoder is fine-tuned on, or generates for
        if key in protocol and protocol[key] is None:
            del protocol[key]
    encoder = protocol.get("encoder")
    if encoder is not None:
        # Opt-in: only a model that switches the search on reads it, and that model's answer keys carry the
        # search settings (HFEncoder.task_fingerprint); fixed-recipe answers keep the hash they had without it.
        encoder.pop("search", None)
    payload["metadata"] = {"version": (dumped.get("metadata") or {}).get("version")}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
