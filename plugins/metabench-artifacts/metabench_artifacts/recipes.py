"""Boisson et al.'s Table 1 datasets as built from the registry's datasets: what is pooled, how labels map,
which lexical keys and deduplication apply, and the original split where one exists.

Each recipe becomes a registered dataset ``boisson_<name>`` (see ``derived.py``) taking ``regime``,
``fold`` and ``seed``. Differences from the paper are stated in ``note`` and shown by `metabench ls datasets`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from metabench.plugin_api import expression_key

MET, LIT = "metaphor", "literal"
#: Footnote 4: "Given their large size (i.e., more than 10,000 test instances) ... a single train/valid/test
#: split". The paper applies it to every dataset of 14,820 items or more; we use the same cut.
SINGLE_SPLIT_ITEMS = 14_000

Slice = tuple[str, str, tuple]  # (dataset, split, ((arg, value), ...))


def _expression(item) -> str:
    return expression_key(item, item.text)


def _adjective(item) -> str:
    return str(item.meta["adjective"]).lower()


def _noun(item) -> str:
    return str(item.meta["noun"]).lower()


def _text_and_expression(item) -> tuple:
    return (" ".join(item.text.lower().split()), _expression(item))


#: lexical grouping keys by name (tasks name them through the regime: lexical = key, lexical_l2 = key_l2)
KEYS = {"expression": _expression, "adjective": _adjective, "noun": _noun}


@dataclass(frozen=True)
class Recipe:
    name: str
    paper: str
    pool: tuple[Slice, ...] = ()
    sample_from: tuple[Slice, ...] = ()
    original: dict[str, tuple[Slice, ...]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    key: str = "expression"
    key_l2: str | None = None
    dedup: bool = False
    sampling: str = "bo"  # for sample_from: "bo" (Boisson's matching) or "random" (its control; sampling.SAMPLINGS)
    #: a base dataset whose release ships its own 5-fold train/dev/test split (argument ``fold``): the
    #: ``authors`` regime, beside the hashed random and lexical folds
    authors: str | None = None
    #: arguments of the derived dataset passed on to every base slice that takes them: name -> allowed values,
    #: the recipe's default first (TroFi's ``labels``: the paper's cluster labels unless a task asks otherwise)
    base_args: dict[str, tuple[str, ...]] = field(default_factory=dict)
    note: str = ""

    @property
    def regimes(self) -> tuple[str, ...]:
        out = ("original",) if self.original else ()
        if self.pool or self.sample_from:
            out += ("random", "lexical") + (("lexical_l2",) if self.key_l2 else ())
        return out + (("authors",) if self.authors else ())

    @property
    def bases(self) -> tuple[str, ...]:
        slices = [*self.pool, *self.sample_from, *(s for slices in self.original.values() for s in slices)]
        return tuple(dict.fromkeys(s[0] for s in slices))


def dedup_key(item) -> tuple:
    """Two items are duplicates when their normalised text and expression agree (A.1, A.4)."""
    return _text_and_expression(item)


RECIPES = {
    r.name: r
    for r in (
        Recipe(
            name="trofi",
            paper="TroFi",
            pool=(("trofi", "all", ()),),
            dedup=True,
            base_args={"labels": ("cluster", "human")},
            note=(
                "Gao et al.'s formatted TroFi (3,737). The paper's original split (1,772 / 1,965) is not in the "
                "mirror, so there is no `original` regime; random/lexical pools drop 95 repeated WSJ sentences "
                "(same text and target verb; A.4), leaving 3,642. labels: cluster (default; TroFi's own clusters, "
                "2,097 / 3,642 = 57.6 % metaphor, the paper's Table 1 and Maj) or human (Gao et al.'s annotation, "
                "43.5 %). Lexical key: the target verb lemma."
            ),
        ),
        Recipe(
            name="tsv_an",
            paper="TSV_AN",
            pool=(("tsv_an", "test", ()), ("tsv_an", "train", ())),
            original={"train": (("tsv_an", "train", ()),), "test": (("tsv_an", "test", ()),)},
            key="adjective",
            key_l2="noun",
            dedup=True,
            note=(
                "Tsvetkov et al.'s adjective–noun pairs, no sentence (A.2): views act on the pair. Random/lexical "
                "pools drop the 18 training pairs that repeat a test pair (A.1), leaving 1,945. lexical = the "
                "adjective, lexical_l2 = the noun (A.3)."
            ),
        ),
        Recipe(
            name="tsv_svo",
            paper="TSV_SVO",
            pool=(),
            original={"train": (("trofi", "all", ()),), "test": (("tsv_svo", "test", ()),)},
            base_args={"labels": ("cluster", "human")},
            note=(
                "Original split only (Table 2): train = TroFi (3,737, as Tsvetkov et al.; labels: cluster by "
                "default, as boisson_trofi), test = the 222 SVO sentences of Tsvetkov et al.'s "
                "Datasets_ACL2014.xlsx, PME = the verb in the sentence."
            ),
        ),
        Recipe(
            name="card_n",
            paper="CARD_N",
            pool=(("cardillo", "all", ()),),
            authors="cardillo",
            note=(
                "Cardillo nominal sentences (512, 50 % metaphor); key = the PME (each appears once literal, once "
                "metaphorical). authors = the Cardiff release's own split (records tagged CARD_N_LEMSPLIT, field "
                "5-folds: 5 folds of about 70/10/20, vehicle-disjoint), beside the hashed folds."
            ),
        ),
        Recipe(
            name="jank",
            paper="JANK",
            pool=(("jankowiak", "all", ()),),
            labels={"anomaly": LIT},
            note=(
                "Jankowiak 'A is a B' triples (360); metaphor vs the rest, anomalous sentences counted as "
                "non-metaphorical (literal), which reproduces Table 1's 33 % metaphor. Key = the vehicle B."
            ),
        ),
        Recipe(
            name="moh",
            paper="MOH",
            pool=(("moh_raw", "all", ()),),
            note="The full MOH release (1,639 term–sense instances; the paper counts 1,632). Key = the verb.",
        ),
        Recipe(
            name="magpie",
            paper="MAGPIE",
            pool=(("magpie", "all", ()),),
            labels={"figurative": MET},
            note=(
                "Dankers et al.'s MAGPIE subset (44,451 sentences, 1,727 idioms), not the paper's full 48,395 "
                "MAGPIE: the filtered jsonl and its R/L splits are not obtainable, so there is no `original` "
                "regime. Key = the idiom. Single split (footnote 4): fold 0 only."
            ),
        ),
        Recipe(
            name="vuac_st1",
            paper="VUAC_ST1",
            pool=(("vua_shared_task", "train", (("track", "verb"),)), ("vua_shared_task", "test", (("track", "verb"),))),
            original={
                "train": (("vua_shared_task", "train", (("track", "verb"),)),),
                "test": (("vua_shared_task", "test", (("track", "verb"),)),),
            },
            note=(
                "VUA 2020 shared task, verb track (17,240 / 5,873). Key = the lower-cased target word (the "
                "release has no lemmas). Random/lexical: single split (footnote 4), fold 0 only."
            ),
        ),
        Recipe(
            name="vuac_st2",
            paper="VUAC_ST2",
            pool=(("vua_shared_task", "test", (("track", "allpos"),)),),
            note=(
                "PARTIAL: the all-POS track's 72,611 training targets are not in the mirror, so only its 22,196 "
                "test targets are pooled (random/lexical single split of those; no `original` regime)."
            ),
        ),
        Recipe(
            name="vua18_bo",
            paper="VUAC_BO",
            sample_from=tuple(("vua18", split, ()) for split in ("train", "dev", "test")),
            note=(
                "Artifact-controlled sample (sampling.py) of VUA-18 (train+dev+test sentences): every metaphorical "
                "token with one literal partner of the same word, else normalised form, else POS. The paper's "
                "VUAC_BO (39,223 items, 52 % metaphor) was not released; this is our re-implementation. Single split."
            ),
        ),
        Recipe(
            name="vua18_rs",
            paper="VUA-18 (random sampling)",
            sample_from=tuple(("vua18", split, ()) for split in ("train", "dev", "test")),
            sampling="random",
            note=(
                "The control for vua18_bo: the same metaphors, each with a literal partner drawn from any untagged "
                "span of the same length (words with a letter), without lexical matching. Single split."
            ),
        ),
        Recipe(
            name="m4x_en_bo",
            paper="Meta4XNLI-EN (BO sampling)",
            sample_from=(("meta4xnli_detection", "all", (("language", "en"),)),),
            note=(
                "Artifact-controlled sample of Meta4XNLI English (all premises and hypotheses). No POS in the "
                "release: metaphors without a same-word or same-normalised-form partner stay unpaired."
            ),
        ),
        Recipe(
            name="m4x_en_rs",
            paper="Meta4XNLI-EN (random sampling)",
            sample_from=(("meta4xnli_detection", "all", (("language", "en"),)),),
            sampling="random",
            note="The control for m4x_en_bo: the same metaphors, literal partners of the same length drawn at random.",
        ),
        Recipe(
            name="m4x_es_bo",
            paper="Meta4XNLI-ES (BO sampling)",
            sample_from=(("meta4xnli_detection", "all", (("language", "es"),)),),
            note="Artifact-controlled sample of Meta4XNLI Spanish (as m4x_en_bo).",
        ),
        Recipe(
            name="cometa_bo",
            paper="CoMeta (BO sampling)",
            sample_from=(("cometa", "train", ()), ("cometa", "test", ())),
            note="Artifact-controlled sample of CoMeta (Spanish; train+test sentences; no POS in the release).",
        ),
    )
}
