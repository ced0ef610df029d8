"""``hard_metaphors``: HARD(M) of one model as a dataset, read from the build ``metabench hard mine`` made.

A derived dataset: its items are not in the mirror but in ``$METABENCH_CACHE_DIR/hard/<build>/instances.jsonl``,
found from the model's fingerprint and the SOR and mining settings (``model``, ``sor``, ``mine`` arguments),
and recorded with its sha256 like any data file, so results.json names the exact build scored.
Split ``test``: each hard metaphor (MOH-metaphorical sense, phi < ``xi``) is followed by its literal negative
(the nearest MOH-literal instance of the same verb in SOR space), ids ``hard:<instance>`` and
``lit:<instance>``. Every item carries its phi bin (Fig 5b's bins) in ``meta.phi_bin`` (literal items: '').
"""

from __future__ import annotations

import hashlib
import json

from metabench.plugin_api import bad_split, DataError, DatasetSpec, LIT, MET, MissingExtraError, NotBuiltError


def _item(row: dict, *, ident: str, label: str, phi_bin: str, extra: dict):
    from metabench.plugin_api import TextItem  # noqa: PLC0415

    words = row["words"]
    start = sum(len(w) + 1 for w in words[: row["index"]])
    return TextItem(
        id=ident,
        text=" ".join(words),
        label=label,
        spans=((start, start + len(words[row["index"]])),),
        target_index=row["index"],
        lemma=row["word"].rsplit(".", 1)[0],
        pos="VERB",
        group=row["word"],
        source="hard_metaphors",
        meta={"sense": row["sense"], "gloss": row["gloss"], "phi": row["phi"], "phi_bin": phi_bin,
              "instance": row["id"], **extra},
    )


def load(ctx, split: str, model: str = "hf:minilm-l6", xi=0.8, sor: str = "", mine: str = "", unpaired: str = "keep"):
    from .mine import phi_bin, select_hard  # noqa: PLC0415
    from .sor import SORSettings  # noqa: PLC0415
    from .store import build_dir, index_entry, parse_mine_settings, read_index, resolve_model, settings_flags  # noqa: PLC0415

    if split != "test":
        raise bad_split("hard_metaphors", split, ("test",))
    try:
        threshold = float(xi)
    except (TypeError, ValueError):
        threshold = float("nan")
    if not 0 < threshold < float("inf"):  # NaN too; phi < xi selects, so xi above 1 takes every phi
        raise DataError(f"hard_metaphors: xi={xi!r} is not a positive number", hint="e.g. xi: 0.8 (the paper) or 0.5 (Fig 6)")
    if ctx.registry is None:
        raise DataError("hard_metaphors: its model's short name resolves through a registry, and none was given",
                        hint="load it through metabench.data.load.load_split(registry, ...), as a run does")
    try:
        base = resolve_model(model, ctx.registry)
    except MissingExtraError as exc:
        raise NotBuiltError(f"hard_metaphors: HARD({model}) is mined with {model}: {exc.message}", hint=exc.hint,
                            reason=f"needs metabench[{exc.extra}]") from None
    settings, mining = SORSettings.parse(sor), parse_mine_settings(mine, pinned=True)  # a task file's settings
    entry = read_index().get(index_entry(base.fingerprint, settings, mining))
    folder = build_dir(entry["build"]) if entry else None
    if folder is None or not (folder / "instances.jsonl").is_file():
        raise NotBuiltError(f"hard_metaphors: HARD({model}) has not been built on this machine with these settings",
                            hint=f"build it once (SOR training then mining: CPU-hours for the longer SOR settings, "
                            f"docs/hard-metaphors.md): metabench hard mine --model {model}{settings_flags(settings, mining)}")
    path = folder / "instances.jsonl"
    data = path.read_bytes()
    ctx.used[f"hard/{entry['build']}/instances.jsonl"] = hashlib.sha256(data).hexdigest()
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    items = []
    for hard, negative in select_hard(rows, threshold, unpaired):
        items.append(_item(hard, ident=f"hard:{hard['id']}", label=MET, phi_bin=phi_bin(hard["phi"]), extra={}))
        if negative is not None:  # a hard metaphor whose verb has no literal instance stands alone
            items.append(_item(negative, ident=f"lit:{hard['id']}", label=LIT, phi_bin="",
                               extra={"negative_of": hard["id"]}))
    return items


def specs():
    return [
        DatasetSpec(
            name="hard_metaphors",
            files=(),
            loader="metabench_hard.dataset:load",
            splits=("test",),
            args={"model": None, "xi": None, "sor": None, "mine": None, "unpaired": ("keep", "drop")},
            licence="Derived from SemCor 3.0 and the Raganato WSD sets (Princeton WordNet licence) with MOH sense "
                    "labels (no licence stated; NRC terms): check them before redistributing a build.",
            citation=(
                "Yucheng Li, Frank Guerin and Chenghua Lin. Finding Challenging Metaphors that Confuse Pretrained "
                "Language Models. arXiv:2401.16012, 2024. Built from SemCor (Miller et al. 1994), Raganato et "
                "al. (EACL 2017) and MOH (Mohammad, Shutova & Turney, *SEM 2016)."
            ),
            description=(
                "HARD(M): MOH-metaphorical verb instances whose overlap phi under model M's sense-only "
                "representation is below xi, each with its nearest literal instance of the same verb (a verb "
                "without one keeps its hard metaphors alone: unpaired=keep, the authors'; drop for strict 1:1). "
                "Built per model by `metabench hard mine --model M`; args model, xi (0.8; Fig 6: 0.5), sor, mine, "
                "unpaired. Split test."
            ),
        )
    ]
