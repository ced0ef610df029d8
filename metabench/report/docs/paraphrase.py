"""docs/paraphrase-controls.md's results table, generated from the committed runs (`metabench report docs`):
every model's paired metaphor effect on every original / paraphrase pair of tasks it ran, as
`metabench compare paired-variants` computes it (McNemar for one seed, 2,000 bootstrap resamples, seed 0).
"""

from __future__ import annotations

from .blocks import REDUCED
from .blocks import markdown


def paired_effects_table(context, prefix: str = "mlp_") -> list[str]:
    from ..analyses.paired_variants import paired_effect, variant_pairs  # noqa: PLC0415

    runs = [r for r in context.runs if r.record.task.name.startswith(prefix)]
    rows = []
    for original, paraphrase in sorted(variant_pairs(runs), key=lambda p: (p[0].record.model.spec, p[0].record.task.name, p[1].record.task.name)):
        e = paired_effect(original, paraphrase, n_resamples=2000)
        partial = original.partial or paraphrase.partial
        ci = "—" if e.ci_low is None else f"[{e.ci_low:+.3f}, {e.ci_high:+.3f}]"
        discordant = "/".join(str(e.discordant.get(k, "—")) for k in ("metaphor_right_literal_wrong",
                                                                        "literal_right_metaphor_wrong"))
        why = (["--limit"] if partial else []) + (["reduced training"] if any(k in original.record.model.spec for k in REDUCED) else [])
        parser = original.record.task.config.kind_args.parser
        rows.append([original.record.model.spec, original.record.task.name, paraphrase.record.task.name.replace(original.record.task.name.split("_original")[0], "…"),
                     f"{e.n_items:,}", f"{e.accuracy_original:.3f}", f"{e.accuracy_paraphrase:.3f}", f"{e.effect:+.3f}",
                     ci, e.test, "—" if e.pvalue is None else f"{e.pvalue:.2g}", discordant,
                     ("PARTIAL: " + ", ".join(why) if why else "full")
                     + ("; lenient parser, not the authors'" if parser == "label" else "")])
    return markdown(["model", "original task", "paraphrase task", "shared items", "acc. original", "acc. paraphrase",
                     "effect (original − paraphrase)", "95% CI", "test", "p", "discordant (met. right / lit. right)",
                     "status"], rows)
