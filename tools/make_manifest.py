#!/usr/bin/env python
"""Hash the data mirror and write ``metabench/data/manifest/<family>.json`` (a development tool).

Every hash in the manifests comes from this script reading the mirror, never from a hand-typed value. It adds
the upstream locations of the built-in mirror to the public writer (``metabench data manifest``, which any
plugin uses for its own files; :mod:`metabench.data.manifests` describes the format).
For each mirror file the manifest records where it comes from upstream (repository, pinned commit, path in
the repository), its sha256 and the text encoding the loaders must use.

Usage::

    python tools/make_manifest.py                      # all families, mirror = $METABENCH_DATA_DIR or ../shared/data
    python tools/make_manifest.py --data-dir DIR meta4xnli munch
    python tools/make_manifest.py --check              # recompute and compare with the committed manifests

Encodings are detected (utf-8, else cp1252, else latin-1) unless a rule overrides them. SemCor's
``*.naf.gz`` are hashed decompressed (``compressed: gzip``) and cross-checked against the mirror's
``SHA256SUMS.plain``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's metabench, also when run from elsewhere
from metabench.data.manifests import describe_file, write_manifest  # noqa: E402
MANIFEST_DIR = ROOT / "metabench" / "data" / "manifest"

# Pinned upstream commits (from each folder's SOURCE.md).
META4XNLI = ("elisanchez-beep/meta4xnli", "d83d923d6ccb99362a94fed1495ee9dd2b8b4c2b")
GAO = ("gao-g/metaphor-in-context", "fc5e569fe321ba5a7404cf7416cbe23026aeaf79")
DEEPMET = ("YU-NLPLab/DeepMet", "732ebd6c53f2b9b78ee97ca93e3333ebb89425b2")
CONCEPTNET = ("Pruthvik-Reddy/conceptnet_injected_adapter", "973cbabaab3d8944c309229f42a37679c8fb5ed9")
CAPSTONE = ("tharunikal/capstone-kpriet", "fbacf04f7395ca27ddab3b739aa4ae57f14a2c89")
MELBERT = ("jin530/MelBERT", "11b0f78dae93c71c56b805dc28d810f6050c86c4")
CARDIFF = ("Mionies/Metaphors_and_Analogies", "a7c66ec034fa6d426ac27bc3122a4583ab46f0d6")
TSVETKOV = ("ytsvetko/metaphor", "6eff584b8a61d89378dd21a1e18387b1bda884aa")
MUNCH = ("xiaoyuisrain/metaphor-understanding-challenge", "5b78a540705661f49fda693e504250d4a1fc4516")
NEWSMET = ("AxleBlaze3/NewsMet_Metaphor_Dataset", "53b62809bc720abc76d67aa60cc4bf160d97bf09")
FLUTE = ("tuhinjubcse/model-in-the-loop-fig-lang", "43a0616f9a6d92575182db17325608339b9ead51")
IMPLI = ("UKPLab/acl2022-impli", "d43c272c895c773b311018d51ab65f592c6699bb")
FIGQA = ("nightingal3/Fig-QA", "fb638f847fb6ef0f336c6f6fd71a3a5311d0b48b")
BIZZONI = ("yuri-bizzoni/Metaphor-Paraphrase", "10d89314195d70c22d66821b7d6287a36b92e94a")
ESXNLI = ("artetxem/esxnli", "b03a5a4d4db700deaa7dd6cf5d4d2d179696905c")
HMD = ("liyucheng09/Metaphor_Processing_analysis", "dbd21b421baff4c40d501b39f91fc867149087e1")
SICK = ("kkalouli/SICK-processing", "0848f4aec60870122a4ca18de08ba0e25f6f9a75")
NLTK_DATA = ("nltk/nltk_data", "5db857e6f7df11eabb5e5665836db9ec8df07e28")
MT_IDIOMS = ("vernadankers/mt_idioms", "b7fb4ceec68e9b86726d8b2c8259290834eec6d6")
WSD_CORPORA = ("rubenIzquierdo/wsd_corpora", "c31b9b8eb6d6ca726b6868f19123aaf7e5eb1d88")
GLOSSBERT = ("HSLCY/GlossBERT", "64d282d5bae75064fc1a0b35fae8b250538411ec")
UFSAC = ("getalp/UFSAC", "9815d4460cee1da4635e95a20c53c5485f57ec4e")
METAPHOR_LLM = ("elisanchez-beep/metaphorLLM", "5258c0aa2e3e3217ef99d20efb8c4aa913b65273")


@dataclass
class Rule:
    """Mirror files matching ``pattern`` come from ``repo@commit``: mirror prefix ``src`` -> upstream ``dst``."""

    pattern: str
    upstream: tuple[str, str]
    src: str
    dst: str
    rename: dict = field(default_factory=dict)  # mirror path -> upstream path, for renamed files
    encoding: str = ""  # override the detected encoding
    compressed: str = ""

    def upstream_path(self, path: str) -> str:
        if path in self.rename:
            return self.rename[path]
        assert path.startswith(self.src), (path, self.src)
        return self.dst + path[len(self.src) :]


# One manifest per mirror folder. Patterns are fnmatch patterns on mirror paths ('*' crosses '/').
FAMILIES: dict[str, list[Rule]] = {
    "meta4xnli": [
        Rule("meta4xnli/detection/*.tsv", META4XNLI, "meta4xnli/", "data/meta4xnli/"),
        Rule("meta4xnli/interpretation/*.tsv", META4XNLI, "meta4xnli/", "data/meta4xnli/"),
    ],
    "cometa": [Rule("cometa/cometa_*.tsv", META4XNLI, "cometa/", "data/cometa/")],
    "vua": [
        Rule("vua/vua18_sequence_gao2018/*.csv", GAO, "vua/vua18_sequence_gao2018/", "data/VUAsequence/"),
        Rule("vua/vua_verb_gao2018/*.csv", GAO, "vua/vua_verb_gao2018/", "data/VUA/"),
        Rule("vua/vua_shared_task_ets_2018_2020/vuamc_corpus_*.csv", DEEPMET,
             "vua/vua_shared_task_ets_2018_2020/", "corpora/VUA/"),
        Rule("vua/vua_shared_task_ets_2018_2020/verb_tokens*.csv", DEEPMET,
             "vua/vua_shared_task_ets_2018_2020/", "corpora/VUA/",
             rename={"vua/vua_shared_task_ets_2018_2020/verb_tokens_test_gold_labels.csv":
                     "data/VUA/verb_tokens_test_gold_labels.csv"}),
        Rule("vua/vua_shared_task_ets_2018_2020/VUA_*.csv", DEEPMET, "vua/vua_shared_task_ets_2018_2020/", "data/VUA/"),
        Rule("vua/vua_shared_task_ets_2018_2020/all_pos_tokens_test_gold_labels.csv", DEEPMET,
             "vua/vua_shared_task_ets_2018_2020/", "data/VUA/"),
        Rule("vua/vua20_melbert_format/test.tsv", CONCEPTNET, "vua/vua20_melbert_format/", "data/VUA20/"),
        Rule("vua/vua20_meta4xnli_format/*.tsv", META4XNLI, "vua/vua20_meta4xnli_format/", "data/vua/"),
        Rule("vua/vua_verb_melbert_wsd_format/*.tsv", CAPSTONE, "vua/vua_verb_melbert_wsd_format/", "data/VUAverb/"),
    ],
    "moh_x": [
        Rule("moh_x/melbert_10fold/*.tsv", MELBERT, "moh_x/melbert_10fold/", "data_sample/MOH-X/CLS/"),
        Rule("moh_x/MOH-X_formatted_svo*.csv", GAO, "moh_x/", "data/MOH-X/"),
        Rule("moh_x/raw_MOH-Verb-labels-rels.txt", GAO, "moh_x/", "",
             rename={"moh_x/raw_MOH-Verb-labels-rels.txt": "corpora/MOH-X/MOH-Verb-labels-rels.txt"}),
        Rule("moh_x/moh_full_gao2018/MOH_formatted*.csv", GAO, "moh_x/moh_full_gao2018/", "data/MOH/"),
        Rule("moh_x/moh_full_gao2018/raw_Data-metaphoric-or-literal.txt", GAO, "moh_x/", "",
             rename={"moh_x/moh_full_gao2018/raw_Data-metaphoric-or-literal.txt":
                     "corpora/MOH/Data-metaphoric-or-literal.txt"}),
    ],
    "trofi": [
        Rule("trofi/TroFi_formatted_all3737.csv", GAO, "trofi/", "data/TroFi/"),
        Rule("trofi/TroFi-X_formatted_svo.csv", GAO, "trofi/", "data/TroFi-X/"),
        Rule("trofi/raw_*", GAO, "trofi/raw_", "corpora/TroFi/"),
        Rule("trofi/melbert_10fold/*.tsv", CONCEPTNET, "trofi/melbert_10fold/", "data/TroFi/CLS/"),
    ],
    "boisson_construction_artifacts": [
        Rule("boisson_construction_artifacts/cardiff_metaphors_and_analogies/*.jsonl", CARDIFF,
             "boisson_construction_artifacts/cardiff_metaphors_and_analogies/", "datasets/",
             rename={"boisson_construction_artifacts/cardiff_metaphors_and_analogies/SAT_star/sat_star.jsonl":
                     "datasets/SAT*/sat_star.jsonl"}),
        Rule("boisson_construction_artifacts/cardiff_metaphors_and_analogies/SAT_star/annotations/*.csv", CARDIFF,
             "boisson_construction_artifacts/cardiff_metaphors_and_analogies/SAT_star/", "datasets/SAT*/"),
        Rule("boisson_construction_artifacts/tsv_tsvetkov2014/test_sets/*.txt", TSVETKOV,
             "boisson_construction_artifacts/tsv_tsvetkov2014/test_sets/", "input/"),
        Rule("boisson_construction_artifacts/tsv_tsvetkov2014/test_sets/*.xlsx", TSVETKOV,
             "boisson_construction_artifacts/tsv_tsvetkov2014/test_sets/", "input/"),
        Rule("boisson_construction_artifacts/tsv_tsvetkov2014/train_adj_noun/*.txt", TSVETKOV,
             "boisson_construction_artifacts/tsv_tsvetkov2014/train_adj_noun/", "resources/AdjN/"),
    ],
    "munch": [Rule("munch/tasks/*.json", MUNCH, "munch/", ""), Rule("munch/correct_answers/*.csv", MUNCH, "munch/", "")],
    "newsmet": [
        Rule("newsmet/train_val_test_gold_plus/*.csv", NEWSMET, "newsmet/", "data/"),
        Rule("newsmet/custom_test_sets/*.csv", NEWSMET, "newsmet/", "data/"),
    ],
    "flute": [
        Rule("flute/FLUTEfinal*.json", FLUTE, "flute/", ""),
        Rule("flute/train_by_type/*.jsonl", FLUTE, "flute/train_by_type/", ""),
        Rule("flute/testgolddata/*.jsonl", FLUTE, "flute/", ""),
    ],
    "impli": [
        Rule("impli/idioms/*.tsv", IMPLI, "impli/", ""),
        Rule("impli/metaphors/*.tsv", IMPLI, "impli/", ""),
    ],
    "fig_qa": [
        Rule("fig_qa/train*.csv", FIGQA, "fig_qa/", "data/filtered/"),
        Rule("fig_qa/dev.csv", FIGQA, "fig_qa/", "data/filtered/"),
        Rule("fig_qa/test.csv", FIGQA, "fig_qa/", "data/filtered/"),
        Rule("fig_qa/commonsense_annotation_dev.csv", FIGQA, "fig_qa/", "",
             rename={"fig_qa/commonsense_annotation_dev.csv": "data/commonsense_annotation/dev.csv"}),
    ],
    "metaphor_paraphrase_bizzoni": [Rule("metaphor_paraphrase_bizzoni/*_corpus.txt", BIZZONI, "metaphor_paraphrase_bizzoni/", "")],
    "esxnli": [Rule("esxnli/esxnli*.tsv", ESXNLI, "esxnli/", "")],
    "hard_metaphor_hmd": [Rule("hard_metaphor_hmd/*.tsv", HMD, "hard_metaphor_hmd/", "embeddings/results/")],
    "sick": [Rule("sick/SICK.txt", SICK, "sick/", "")],
    "metaphor_llm_paraphrases": [
        Rule("metaphor_llm_paraphrases/data/*.tsv", METAPHOR_LLM, "metaphor_llm_paraphrases/", ""),
        Rule("metaphor_llm_paraphrases/data/*.json", METAPHOR_LLM, "metaphor_llm_paraphrases/", ""),
    ],
    # rte: the mirror holds the members of packages/corpora/rte.zip; the upstream path names the zip member
    # as '<zip>!/<member>' (the raw URL of such a path is the zip, not the member).
    "rte": [Rule("rte/rte*.xml", NLTK_DATA, "rte/", "packages/corpora/rte.zip!/rte/")],
    "magpie": [
        Rule("magpie/mt_idioms_inputs/*.tsv", MT_IDIOMS, "magpie/mt_idioms_inputs/", "data/magpie/inputs/"),
        Rule("magpie/idiom_keywords.tsv", MT_IDIOMS, "magpie/", "data/"),
    ],
    "semcor": [
        Rule("semcor/semcor3.0_naf/*.naf.gz", WSD_CORPORA, "semcor/semcor3.0_naf/", "semcor3.0/", compressed="gzip"),
        Rule("semcor/raganato_eval/*.data.xml", GLOSSBERT, "semcor/raganato_eval/", "Evaluation_Datasets/"),
        Rule("semcor/raganato_eval/*.gold.key.txt", GLOSSBERT, "semcor/raganato_eval/", "Evaluation_Datasets/"),
    ],
    "wordnet": [Rule("wordnet/dict/*", UFSAC, "wordnet/dict/", "java/src/main/resources/data/wordnet/30/dict/")],
}


def _default_data_dir() -> Path:
    raw = os.environ.get("METABENCH_DATA_DIR")
    return Path(raw) if raw else (ROOT / ".." / "shared" / "data").resolve()


def _mirror_files(data_dir: Path, family: str) -> list[str]:
    base = data_dir / family
    return sorted(p.relative_to(data_dir).as_posix() for p in base.rglob("*") if p.is_file())


def build_family(data_dir: Path, family: str) -> dict:
    rules = FAMILIES[family]
    groups: dict[tuple[str, str], list[dict]] = {}
    matched = 0
    for path in _mirror_files(data_dir, family):
        rule = next((r for r in rules if fnmatch.fnmatch(path, r.pattern)), None)
        if rule is None:
            continue
        matched += 1
        entry = describe_file(data_dir / path, path, upstream_path=rule.upstream_path(path), compressed=rule.compressed)
        if rule.encoding:
            entry["encoding"] = rule.encoding
            entry = {k: entry[k] for k in ("path", "upstream_path", "sha256", "encoding", "compressed") if k in entry}
        groups.setdefault(rule.upstream, []).append(entry)
    if not matched:
        raise SystemExit(f"family {family}: no file of the mirror at {data_dir} matches its rules")
    if family == "semcor":
        _check_semcor_sums(data_dir, groups[WSD_CORPORA])
    return {
        "family": family,
        "generated_by": "tools/make_manifest.py",
        "groups": [{"repo": repo, "commit": commit, "files": files} for (repo, commit), files in groups.items()],
    }


def _check_semcor_sums(data_dir: Path, entries: list[dict]) -> None:
    """The decompressed hashes must equal the mirror's SHA256SUMS.plain, keyed by upstream path."""
    sums_path = data_dir / "semcor" / "semcor3.0_naf" / "SHA256SUMS.plain"
    sums = {}
    for line in sums_path.read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            sums[name.strip()] = digest
    for entry in entries:
        expected = sums.get(entry["upstream_path"].removesuffix(".gz"))
        if expected != entry["sha256"]:
            raise SystemExit(f"{entry['path']}: decompressed sha256 {entry['sha256']} != SHA256SUMS.plain {expected}")
        entry["upstream_path"] = entry["upstream_path"].removesuffix(".gz")


def write(family: str, manifest: dict) -> Path:
    MANIFEST_DIR.mkdir(parents=True, exist_ok=True)
    return write_manifest(manifest, MANIFEST_DIR / f"{family}.json")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("families", nargs="*", help=f"default: all ({', '.join(FAMILIES)})")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--check", action="store_true", help="compare with the committed manifests, write nothing")
    args = parser.parse_args(argv)
    data_dir = (args.data_dir or _default_data_dir()).resolve()
    if not data_dir.is_dir():
        parser.error(f"mirror not found at {data_dir} (set METABENCH_DATA_DIR or pass --data-dir)")
    bad = 0
    for family in args.families or list(FAMILIES):
        if family not in FAMILIES:
            parser.error(f"unknown family {family!r}; known: {', '.join(FAMILIES)}")
        manifest = build_family(data_dir, family)
        count = sum(len(g["files"]) for g in manifest["groups"])
        if args.check:
            current = MANIFEST_DIR / f"{family}.json"
            same = current.is_file() and json.loads(current.read_text(encoding="utf-8")) == manifest
            bad += not same
            print(f"{family}: {count} files, {'up to date' if same else 'DIFFERS from ' + str(current)}")
        else:
            print(f"{family}: {count} files -> {write(family, manifest)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
