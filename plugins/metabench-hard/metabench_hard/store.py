"""Where the pipeline's products live in the cache, keyed by what determines them.

- SOR encoders: ``$METABENCH_CACHE_DIR/sor/<key>/`` through :class:`metabench.models.checkpoints.CheckpointStore`
  (atomic folder rename), key = sha256 of (SOR version, base model fingerprint, training data hash, settings).
- HARD(M) builds: ``$METABENCH_CACHE_DIR/hard/<key>/`` with ``instances.jsonl`` (phi and nearest literal of every
  pool instance of a MOH word), ``vectors.npy`` and ``build.json``; key = sha256 of (SOR key, pool data hash,
  mining settings). The ``hard_metaphors`` dataset finds a build again from the model and the same settings.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from metabench.plugin_api import cache_root, CheckpointStore, MetabenchError, parse_pairs, read_text, write_atomically
from .sor import SOR_VERSION, SORSettings

MINE_VERSION = "hard-mine/1"


@dataclass(frozen=True)
class BaseModel:
    """The encoder under test: the name given, its local folder and its fingerprint."""

    name: str
    folder: Path
    fingerprint: str


def resolve_model(text: str, registry=None) -> BaseModel:
    """``hf:minilm-l6``, ``hf-encoder:pretrained=/path`` or a bare short name / folder -> the base model."""
    from metabench.plugin_api import folder_fingerprint, parse_model_spec, resolve_pretrained  # noqa: PLC0415

    name = text
    if ":" in text:
        spec = parse_model_spec(text)
        if spec.name not in ("hf", "hf-encoder"):
            raise MetabenchError(f"--model {text}: hard metaphors need an HF encoder (hf:... or hf-encoder:...)",
                                 hint="e.g. --model hf:minilm-l6")
        if "pretrained" in spec.args and "_positional" in spec.args:
            raise MetabenchError(f"--model {text}: '{spec.args['_positional']}' and pretrained={spec.args['pretrained']} "
                                 "both give 'pretrained'", hint="give 'pretrained' once")
        name = spec.args.get("pretrained") or spec.args.get("_positional") or ""
    folder = resolve_pretrained(name, registry).folder
    return BaseModel(name, folder, folder_fingerprint(folder))


def _key(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def sor_key(base: BaseModel, data_hash: str, settings: SORSettings) -> str:
    return _key({"version": SOR_VERSION, "base": base.fingerprint, "data": data_hash, "settings": asdict(settings)})


def sor_store() -> CheckpointStore:
    return CheckpointStore(cache_root() / "sor")


@dataclass(frozen=True)
class MineSettings:
    """How phi is computed over the pool (the threshold xi is applied when the set is loaded)."""

    # two gates, as in the authors' code: a sense with at least pool_min_instances instances enters the word's
    # neighbour pool (clustering.py: word2sentence(minimum=1) -> remove_rare_context keeps senses with more than 1
    # instance), and a metaphorical sense gets a phi only with at least rate_min_instances (the paper: "at least
    # four examples"; the code tests the sense count > 4). The deprecated single knob ``min_instances=N`` sets both
    # to N (the first builds, and the committed hard_mi_* tasks: min_instances=4 = pool 4, rate 4).
    pool_min_instances: int = 2
    rate_min_instances: int = 4
    k_rule: str = "n_minus_1"  # worked examples and code; "n" = the paper's sentence read literally
    inventory: str = "all"  # "all" senses of a MOH word in the pool; "moh" = only the senses MOH lists (code)
    max_length: int = 128  # sub-tokens per input when embedding; longer sentences are windowed around the target
    words: str = "candidates"  # "candidates": only verbs with a metaphorical sense rated (same HARD set, cheaper); "all"

    def changed(self) -> dict:
        """Settings that differ from the defaults (what a command line must repeat to find the same build)."""
        default = MineSettings()
        return {k: v for k, v in asdict(self).items() if getattr(default, k) != v}

    def key_payload(self) -> dict:
        """The settings as cache keys see them. Where the two gates are equal this is the single-knob layout of
        the builds made before the split (``min_instances``), so those builds keep their keys and the committed
        hard_mi_* tasks (``min_instances=4``) still find the builds their runs were tested on."""
        payload = asdict(self)
        if self.pool_min_instances == self.rate_min_instances:
            payload["min_instances"] = payload.pop("pool_min_instances")
            del payload["rate_min_instances"]
        return payload


def settings_flags(settings: SORSettings, mine: MineSettings) -> str:
    """' --sor steps=300,context_words=10 --mine pool_min_instances=4': the flags naming non-default settings."""
    parts = [(flag, ",".join(f"{k}={v}" for k, v in changed.items()))
             for flag, changed in (("sor", settings.changed()), ("mine", mine.changed()))]
    return "".join(f" --{flag} {text}" for flag, text in parts if text)


def build_key(sor: str, pool_hash: str, mine: MineSettings) -> str:
    return _key({"version": MINE_VERSION, "sor": sor, "pool": pool_hash, "mine": mine.key_payload()})


def build_dir(key: str) -> Path:
    return cache_root() / "hard" / key


def index_path() -> Path:
    """``hard/index.json``: (base fingerprint, SOR settings, mining settings) -> build key, for the dataset loader."""
    return cache_root() / "hard" / "index.json"


def index_entry(base_fingerprint: str, settings: SORSettings, mine: MineSettings) -> str:
    return _key({"base": base_fingerprint, "settings": asdict(settings), "mine": mine.key_payload()})


def read_index() -> dict:
    try:
        return json.loads(read_text(index_path()))
    except (OSError, ValueError, MetabenchError):  # unreadable, damaged or not a file: no build known
        return {}


def record_build(base_fingerprint: str, settings: SORSettings, mine: MineSettings, key: str, name: str) -> None:
    index = read_index()
    index[index_entry(base_fingerprint, settings, mine)] = {"build": key, "model": name}
    write_atomically(index_path(), json.dumps(index, indent=2, sort_keys=True))


#: the single knob of the first builds: ``min_instances=N`` means pool_min_instances=N and rate_min_instances=N
LEGACY_MIN_INSTANCES = "min_instances"


def parse_mine_settings(text: str | None, *, pinned: bool = False) -> MineSettings:
    """``rate_min_instances=5,k_rule=n`` -> mining settings; errors name the bad field and the allowed values.

    ``min_instances=N`` (deprecated; the committed hard_mi_* tasks name it) sets both gates to N, exactly what it
    computed before the split, with a FutureWarning naming the two settings; it cannot be combined with them.
    ``pinned``: the text is a task file's ``dataset_args`` (the hard_mi_* tasks pin the knob their committed runs
    were built with, and cannot change it without changing their config hash): no warning, since the user who
    loads the task, or builds a leaderboard of its runs, has nothing to change."""
    import warnings  # noqa: PLC0415
    from dataclasses import fields  # noqa: PLC0415

    known = {f.name: f.type for f in fields(MineSettings)} | {LEGACY_MIN_INSTANCES: "int"}
    values: dict = {}
    for name, raw in parse_pairs(text, what="mining setting", known=known).items():
        if known[name] == "int":
            if not raw.isdigit():
                raise MetabenchError(f"mining setting {name}={raw!r} is not a whole number")
            values[name] = int(raw)
        else:
            values[name] = raw
    if LEGACY_MIN_INSTANCES in values:
        both = values.pop(LEGACY_MIN_INSTANCES)
        given = sorted({"pool_min_instances", "rate_min_instances"} & values.keys())
        if given:
            raise MetabenchError(f"mining setting min_instances={both} sets both gates and cannot be combined with "
                                 f"{' and '.join(given)}", hint="name pool_min_instances and rate_min_instances only")
        if not pinned:
            warnings.warn(f"mining setting min_instances={both} is deprecated: it sets both gates, "
                          f"pool_min_instances={both},rate_min_instances={both} (the same build as before); the "
                          "authors' defaults are pool_min_instances=2,rate_min_instances=4", FutureWarning, stacklevel=2)
        values["pool_min_instances"] = values["rate_min_instances"] = both
    settings = MineSettings(**values)
    if settings.k_rule not in ("n_minus_1", "n"):
        raise MetabenchError(f"mining setting k_rule={settings.k_rule!r} is not n_minus_1 or n")
    if settings.words not in ("candidates", "all"):
        raise MetabenchError(f"mining setting words={settings.words!r} is not candidates or all")
    if settings.inventory not in ("all", "moh"):
        raise MetabenchError(f"mining setting inventory={settings.inventory!r} is not all or moh")
    if settings.pool_min_instances < 2 or settings.max_length < 8:
        raise MetabenchError("mining settings need pool_min_instances >= 2 and max_length >= 8")
    if settings.rate_min_instances < settings.pool_min_instances:
        raise MetabenchError(f"mining settings rate_min_instances={settings.rate_min_instances} < pool_min_instances="
                             f"{settings.pool_min_instances}: a sense left out of the pool has no neighbours to rate")
    return settings


def find_build(model: str, settings: SORSettings, mine: MineSettings, registry=None) -> Path:
    """The build folder of HARD(model) for these settings, or an error saying how to build it."""
    base = resolve_model(model, registry)
    entry = read_index().get(index_entry(base.fingerprint, settings, mine))
    folder = build_dir(entry["build"]) if entry else None
    if folder is None or not (folder / "build.json").is_file():
        raise MetabenchError(f"HARD({model}) has not been built with these settings",
                             hint=f"build it once: metabench hard mine --model {model}{settings_flags(settings, mine)}")
    return folder
