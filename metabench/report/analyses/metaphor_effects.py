"""The gaps page's paired and controlled sections, as plain rows for the reporters (JSON, Markdown, HTML).

Beside the unpaired subset gaps (`gaps`), the page shows: every paired metaphor effect (`paired_variants`:
one model on an original task and its paraphrase task), laid out as the paper's tables (original vs each
paraphrase generator per set, model and prompt type), and the surface controls of every metaphor/literal
pair (`controls`), unpaired and paired, with the one-line answer per model. A pair that cannot be tested
(incomplete run, task changed since the run, data not available for the controls) becomes a note, never a
failed build.
"""

from __future__ import annotations

from ...errors import MetabenchError
from ...registry import Registry
from ..compare import adjust
from .gaps import gap_pairs
from .paired_variants import generator, paired_effect, variant_pairs
from ...runs.stored import Run

#: The paper's prompt types by task-name suffix, and the suffixes beyond the paper: the scored decoder mode and
#: the encoder.
PROMPTS = {"nli_zero": "nli-zero", "qa_few": "qa-few-ent", "chain": "chain",
           "nli_zero_ll": "nli-zero, scored (label-word log-likelihood)", "sick": "encoder (SICK-trained)"}
GENERATORS = {"commandr": "Command-R+", "mistral": "Mistral-7B"}


def paired_rows(runs: list[Run], correction: str, alpha: float, confidence: float, n_resamples: int,
                seed: int) -> dict:
    effects, partial, errors = [], [], []
    for original, paraphrase in variant_pairs(runs):
        try:
            effects.append(paired_effect(original, paraphrase, confidence=confidence, n_resamples=n_resamples,
                                         seed=seed))
        except MetabenchError as exc:
            errors.append(exc.message)
            continue
        partial.append(_partial(original) or _partial(paraphrase))
    adjust(effects, correction)
    rows = []
    for effect, is_partial in zip(effects, partial):
        row = effect.as_dict()
        row["partial"] = is_partial
        row["generator"] = GENERATORS.get(generator(effect.paraphrase_task) or "", generator(effect.paraphrase_task))
        row["significant"] = effect.p_adjusted is not None and effect.p_adjusted <= alpha
        rows.append(row)
    return {"rows": rows, "errors": errors, "layout": _paper_layout(rows)}


def _partial(run: Run) -> bool:
    """A run over part of its test split (``--limit``); older Run objects without the notion count as whole."""
    return bool(getattr(run, "partial", False))


def _paper_layout(rows: list[dict]) -> list[dict]:
    """One row per (set, prompt type, model): accuracy on the originals and on each generator's paraphrases."""
    table: dict[tuple, dict] = {}
    for row in rows:
        base = row["original_task"]
        prompt = next((label for suffix, label in PROMPTS.items() if base.endswith("_" + suffix)), "")
        key = (base, row["model"])
        entry = table.setdefault(key, {"original_task": base, "model": row["model"], "prompt": prompt,
                                       "original": row["accuracy_original"], "paraphrases": {}, "partial": False})
        entry["partial"] = entry["partial"] or row["partial"]
        entry["paraphrases"][row["generator"]] = {
            "accuracy": row["accuracy_paraphrase"], "effect": row["effect"], "n_items": row["n_items"],
            "significant": row["significant"]}
    return sorted(table.values(), key=lambda e: (e["original_task"], e["model"]))


def control_rows(registry: Registry, runs: list[Run], confidence: float) -> dict:
    from .controls import controls  # noqa: PLC0415 - statsmodels loads only when a page shows controls
    from .surface import SurfaceFeatures  # noqa: PLC0415

    features = SurfaceFeatures(registry)
    pairs = [(subset, reference, False) for reference, subset in gap_pairs(runs)]
    pairs += [(original, paraphrase, True) for original, paraphrase in variant_pairs(runs)]
    rows, errors = [], []
    for metaphor, literal, paired in pairs:
        try:
            result = controls(registry, metaphor, literal, paired=paired, confidence=confidence, features=features)
        except MetabenchError as exc:
            errors.append(f"{metaphor.record.model.spec}: {metaphor.record.task.name} vs {literal.record.task.name}: {exc.message}")
            continue
        row = result.as_dict()
        row["partial"] = _partial(metaphor) or _partial(literal)
        for name in ("metaphor", "overlap", "length"):
            row[f"{name}_coef"] = next((c for c in row["regression"]["coefficients"] if c["name"] == name), None)
        rows.append(row)
    return {"rows": rows, "errors": errors}
