"""A run degenerate under its task's recipe (#35 item 5): one rule, read by docs/headline-runs.md and the board.

The paper's recipe stays the protocol; this says when a run made with it did not train reliably on these data,
so a reader does not take its mean at face value. Two marks, by ``STABILITY_RULE``:

- *unstable across seeds*: the per-seed values span more than ``UNSTABLE_RANGE`` (MOH-X's fold means
  0.453 / 0.538 / 0.714);
- *constant-like at seed s*: a seed's most common answer is given for more than ``SKEW_MARGIN`` more of the
  items than the golds give it (single-label answers; a k-fold group pools its folds' answers per seed).
"""

from __future__ import annotations

import json
from collections import Counter

#: Unstable across seeds: max − min of the per-seed headline values above this (absolute, on the 0–1 scale):
#: a seed-to-seed spread this large is more than the reported mean can summarise, whatever the std says (with
#: 3 seeds the range is always ≈ 2 × std, so a relative rule would flag every run).
UNSTABLE_RANGE = 0.10
#: Constant-like seed: its most common answer's share of the items exceeds the golds' share of that answer by
#: more than this (MOH-X seed 0 answers "literal" for 79 % of the items where the golds have 52 %).
SKEW_MARGIN = 0.20
STABILITY_RULE = (f"unstable across seeds: the per-seed values span more than {UNSTABLE_RANGE:.2f}; constant-like "
                  f"at a seed: its most common answer's share of the items exceeds the golds' share of it by more "
                  f"than {SKEW_MARGIN:.2f} (single-label answers; a k-fold group pools its folds per seed)")


def assess(per_seed: list, runs: list) -> dict:
    """The rule applied to one headline: ``per_seed`` its values (None where a seed recorded none), ``runs`` the
    runs whose answers it summarises (a group's folds). ``range`` is None with fewer than two values."""
    values = [v for v in per_seed if isinstance(v, (int, float))]
    spread = max(values) - min(values) if len(values) >= 2 else None
    return {"per_seed": list(per_seed), "range": spread, "unstable": spread is not None and spread > UNSTABLE_RANGE,
            "skewed": skewed_seeds(runs)}


def marks(verdict: dict) -> list[str]:
    """The marks of a verdict of `assess`, as the docs and the site print them."""
    out = []
    if verdict["unstable"]:
        out.append(f"unstable across seeds (range {verdict['range']:.3f} > {UNSTABLE_RANGE:.2f})")
    out += [f"constant-like at seed {s['seed']} ({s['share']:.0%} {s['answer']}, golds {s['gold_share']:.0%})"
            for s in verdict["skewed"]]
    return out


def per_seed_text(verdict: dict) -> str:
    """'0.453 / 0.538 / 0.714', '—' for a seed without a value."""
    return " / ".join(f"{v:.3f}" if isinstance(v, (int, float)) else "—" for v in verdict["per_seed"]) or "—"


def stability(per_seed: list, runs: list) -> str:
    """The per-seed values, then the marks: '0.453 / 0.538 / 0.714: unstable across seeds (…); constant-like …'."""
    verdict = assess(per_seed, runs)
    found = marks(verdict)
    return per_seed_text(verdict) + (": " + "; ".join(found) if found else "")


def skewed_seeds(runs: list) -> list[dict]:
    """Seeds whose most common answer (pooled over the runs, e.g. a group's folds) is given for more than
    ``SKEW_MARGIN`` more of the items than the golds give it; single-label answers only (tag sequences: [])."""
    answers: dict = {}
    golds: dict = {}
    for run in runs:
        for row in run.samples:
            if isinstance(row.get("prediction"), (list, dict)) or isinstance(row.get("gold"), (list, dict)):
                return []
            answers.setdefault(row["seed"], []).append(_key(row["prediction"]))
            golds.setdefault(row["seed"], []).append(_key(row["gold"]))
    out = []
    for seed in sorted(answers):
        answer, count = Counter(answers[seed]).most_common(1)[0]
        share = count / len(answers[seed])
        gold_share = golds[seed].count(answer) / len(golds[seed])
        if share - gold_share > SKEW_MARGIN:
            shown = json.dumps(answer[1], ensure_ascii=False) if answer[0] else answer[1]
            out.append({"seed": seed, "answer": shown, "share": share, "gold_share": gold_share})
    return out


def _key(answer) -> tuple[bool, str]:
    """An answer as a counting key: a string as itself (most answers: no JSON encoding per row), anything else as
    its JSON, kept apart from strings (the answer 1 is not the answer "1")."""
    return (True, answer) if isinstance(answer, str) else (False, json.dumps(answer, ensure_ascii=False))
