"""Export metabench's prompted tasks as lm-evaluation-harness tasks (``metabench export lm-eval OUTDIR``).

For every selected task of kind ``choice`` or ``generation`` the exporter renders the requests exactly as
metabench sends them (prompt, few-shot examples, options) and writes:

- ``OUTDIR/data/<task>.jsonl``: one document per test item: ``id``, ``query`` (the prompt), and
  ``choices`` + ``gold`` (choice) or ``gold`` + what the parser needs (generation);
- ``OUTDIR/<task>.yaml``: an lm-eval task reading that file (``dataset_path: json``, absolute
  ``data_files``): ``multiple_choice`` with ``target_delimiter: ""`` (the options carry their own leading
  space, so lm-eval scores the very (context, continuation) pairs metabench scores), or ``generate_until``
  with the task's stop strings, token limit and temperature, scored by ``process_results`` in
- ``OUTDIR/metabench_lmeval_utils.py``, which parses outputs with metabench's own parsers (so metabench must
  be importable where lm-eval runs);
- ``OUTDIR/README.md``: how to run them, and what differs.

Run with ``lm_eval --model hf --model_args pretrained=<folder> --tasks <task> --include_path OUTDIR``.
Tasks whose metabench protocol uses the chat template need ``--apply_chat_template`` (and the task's
system message as ``--system_instruction``); the README lists them. Ranking tasks (MUNCH generation)
have no lm-eval equivalent (lm-eval exposes no next-token top-k): they are exported as greedy generation
scored by top-1 accuracy (``acc_at_1``, which equals metabench's ``accuracy_at_1``); MRR and Recall@k stay
metabench-only. Sampled tasks with several seeds are exported as one run (``repeats: 1``).

A benchmark whose own kind is not prompted (VUA-Verb, MOH-X, NewsMet: ``classification``; VUA-18: ``tagging``)
answers decoders through its ``protocol`` sections (:mod:`metabench.answering`); each section with its own kind is
exported as a task of its own, ``<task>_scored`` and ``<task>_generated``, on the same test items:

- scored (``protocol.decoder``, ``kind: choice``): ``multiple_choice`` with the section's template and options
  (``acc``; where the benchmark ranks by the positive class's F1, the options are ordered with that label second,
  so lm-eval's ``f1``, scikit-learn's binary F1 of choice 1, is that F1);
- generated (``protocol.decoder_generated``, ``kind: generation``): ``generate_until`` with the strict parser
  written as lm-eval filters where lm-eval can say it (a label or a letter: ``regex`` anchored at both ends, then
  ``lowercase`` and ``map`` from aliases to labels, scored by ``exact_match``; an unread answer is
  ``[invalid]``), and by ``process_results`` with metabench's strict parser where it cannot (a list of words
  aligned back to the sentence). Each task's notes say what lm-eval cannot express (the format-failure rate,
  an F1 of generated labels, Unicode normalisation).

A metabench group with ``aggregate: mean`` (the k-fold benchmarks ``moh_x_cv`` and ``trofi_cv``, a paper's average
row such as ``m4x_int_en_ft``) whose members were all exported in one way is also written as an lm-eval group,
``OUTDIR/<group>[_scored|_generated].yaml`` (``group:``, ``task:`` the members' exported tasks of that way,
``aggregate_metric_list`` with every metric the members report, ``aggregation: mean``, ``weight_by_size: false``),
so ``lm_eval --tasks moh_x_cv_scored`` runs every fold and prints the folds' mean. That mean is metabench's group
aggregate (:func:`metabench.report.groups.mean_over_members`): each fold's metric computed on its own items (an F1
within the fold, not over the pooled predictions), then the unweighted mean over folds, each fold counting once
whatever its size. The ± lm-eval prints beside a group combines the folds' standard errors; metabench's ± is the
std over seeds of that mean (an exported way is one run).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import safe_paths
from ..errors import MetabenchError
from ..requests import ChoiceRequest

UTILS_NAME = "metabench_lmeval_utils"

#: Tag of every exported task (and prefix of its tags): lm-eval ships a task group called ``metabench`` (an
#: unrelated benchmark) with ``metabench_arc`` etc., so the plain name would override or mix with it.
EXPORT_TAG = "metabench_metaphor"

UTILS_SOURCE = '''"""process_results for metabench tasks exported to lm-eval: metabench's parsers read the outputs."""

from metabench.kinds import parsers
from metabench.metrics.tagging import span_counts, token_counts
from metabench.requests import first_word


def _text(results):
    return results[0] if results else ""


def process_label(doc, results):
    parsed = parsers.parse_label(_text(results), doc["labels"], doc.get("aliases") or {})
    return {"acc": float(parsed.value == doc["gold"]), "parse_ok": float(parsed.ok)}


def process_letter(doc, results):
    parsed = parsers.parse_letter(_text(results), doc.get("letters") or "ABCD")
    return {"acc": float(parsed.value == doc["gold"]), "parse_ok": float(parsed.ok)}


def process_word(doc, results):
    parsed = parsers.parse_word(_text(results))
    return {"acc": float(parsers.norm_word(parsed.value) == parsers.norm_word(doc["gold"])), "parse_ok": float(parsed.ok)}


def process_raw(doc, results):
    text = _text(results).strip()
    return {"acc": float(text == doc["gold"]), "parse_ok": float(bool(text))}


def process_tags(doc, results):
    text = _text(results)
    if doc["parser"] == "marked":
        parsed = parsers.parse_marked(text, doc["words"], doc["positive"], doc.get("mark") or "*", doc.get("close_mark"))
    elif doc["parser"] == "word_list_strict":
        parsed = parsers.parse_word_list_strict(text, doc["words"], doc["positive"])
    else:
        parsed = parsers.parse_word_list(text, doc["words"], doc["positive"])
    span = span_counts(doc["gold"], parsed.value, positive=doc["positive"])
    token = token_counts(doc["gold"], parsed.value, positive=doc["positive"])
    return {
        "span_f1": (span["tp"], span["fp"], span["fn"]),
        "token_f1": (token["tp"], token["fp"], token["fn"]),
        "parse_ok": float(parsed.ok),
    }


def process_rank_top1(doc, results):
    word = first_word(_text(results).lstrip())
    answers = {parsers.norm_word(a) for a in doc["gold"]}
    return {"acc_at_1": float(bool(word) and parsers.norm_word(word) in answers), "parse_ok": float(bool(word))}


def f1_from_counts(items):
    tp = sum(i[0] for i in items)
    fp = sum(i[1] for i in items)
    fn = sum(i[2] for i in items)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
'''


@dataclass
class Exported:
    task: str
    path: Path
    items: int
    output_type: str
    notes: list[str] = field(default_factory=list)
    #: (metric, filter) pairs lm-eval reports for this task: ``acc,none``, ``exact_match,strict``...
    metrics: list[tuple[str, str]] = field(default_factory=list)
    #: The metabench task exported, and the way: "" (its own prompted kind), "scored" or "generated".
    source: str = ""
    way: str = ""
    #: A group's members (its exported tasks); empty for a task.
    members: list[str] = field(default_factory=list)

    @property
    def is_group(self) -> bool:
        return self.output_type == "group"


def _q(value) -> str:
    """A YAML scalar (JSON is YAML)."""
    return json.dumps(value, ensure_ascii=False)


def _metric(name: str, aggregation: str = "mean") -> str:
    agg = f"!function {UTILS_NAME}.f1_from_counts" if aggregation == "f1" else aggregation
    return f"  - metric: {name}\n    aggregation: {agg}\n    higher_is_better: true\n"


def export_lmeval(registry, selection: str, outdir: Path, *, limit: int | None = None,
                  data_dir: Path | None = None) -> list[Exported]:
    from ..config.index import TaskIndex
    from ..jobs import prepare

    index = TaskIndex(registry)
    names = index.select(selection)
    outdir = Path(outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)  # every file below through safe_paths: no symlink leads out of it
    safe_paths.write_text(outdir, outdir / f"{UTILS_NAME}.py", UTILS_SOURCE)
    exported, skipped = [], []
    for name in names:
        task = index.load(name)
        config = task.config
        units = _units(task)
        if not units:
            skipped.append((name, f"kind '{config.kind}' has no prompt, and the task no protocol.decoder or "
                                  "protocol.decoder_generated of its own kind"))
            continue
        for export_name, section_key in units:
            if export_name != name and export_name in index.tasks:
                raise MetabenchError(f"task '{name}': its {section_key} section would be exported as "
                                     f"'{export_name}', which is the name of another task",
                                     hint="rename one of the two tasks")
            exported.append(_export_one(registry, task, export_name, section_key, outdir, limit, data_dir))
    if not exported:
        raise MetabenchError(
            f"--tasks {selection}: nothing to export (only choice and generation tasks, and tasks with decoder "
            "protocols, have prompts)",
            hint="; ".join(f"{n}: {why}" for n, why in skipped[:5]) or None,
        )
    groups, partial = _groups(index, exported, outdir, limit)
    _readme(outdir, exported, skipped, groups, partial)
    return exported + groups


#: Suffix of an exported task's name per way (the task's own prompted kind: none).
WAY_SUFFIX = {"": "", "scored": "_scored", "generated": "_generated"}


def _groups(index, exported: list[Exported], outdir: Path, limit: int | None) -> tuple[list[Exported], list[str]]:
    """An lm-eval group per ``aggregate: mean`` group and way whose members were all exported in that way (see the
    module's docstring); and, for the README, the mean groups the selection holds only part of."""
    by_way: dict[str, dict[str, Exported]] = {}
    for e in exported:
        by_way.setdefault(e.way, {})[e.source] = e
    taken = {e.task for e in exported}
    groups, partial = [], []
    for name, group in sorted(index.groups.items()):
        if group.aggregate != "mean":
            continue
        members = list(dict.fromkeys(index.select(name)))  # leaf tasks, as metabench's group mean takes them
        written = False
        for way, done in sorted(by_way.items()):
            if not all(m in done for m in members):
                continue
            export_name = f"{name}{WAY_SUFFIX[way]}"
            if export_name in taken or export_name in index.tasks:
                raise MetabenchError(f"group '{name}': its {way or 'own'} way would be exported as '{export_name}', "
                                     "which is the name of a task", hint="rename the group or the task")
            groups.append(_export_group(name, group, way, [done[m] for m in members], outdir, limit))
            taken.add(export_name)
            written = True
        if not written and any(m in done for done in by_way.values() for m in members):
            partial.append(f"{name} ({sum(any(m in d for d in by_way.values()) for m in members)} of {len(members)} "
                           "members exported: select the group to export them all)")
    return groups, partial


def _export_group(name: str, group, way: str, members: list[Exported], outdir: Path, limit: int | None) -> Exported:
    """One lm-eval group YAML: the members' unweighted mean of every metric they all report (metabench's
    ``aggregate: mean``)."""
    export_name = f"{name}{WAY_SUFFIX[way]}"
    shared = [m for m in members[0].metrics if all(m in e.metrics for e in members[1:])]
    aggregate = "".join(f"  - metric: {metric}\n    filter_list: [{_q(filt)}]\n    aggregation: mean\n"
                        "    weight_by_size: false\n" for metric, filt in shared)
    notes = [f"metabench group '{name}' (aggregate: mean) in the {way or 'own'} way of its {len(members)} members: "
             "each member's metric on its own items, then the unweighted mean over members (weight_by_size: false), "
             "as metabench's group row"]
    header = (f"# Exported by metabench from group '{name}' (aggregate: mean); {len(members)} members"
              f"{' (--limit ' + str(limit) + ')' if limit is not None else ''}.\n"
              + "".join(f"# note: {n}\n" for n in notes))
    text = (header + f"group: {export_name}\n"
            "task:\n" + "".join(f"  - {e.task}\n" for e in members)
            + "aggregate_metric_list:\n" + aggregate
            + "metadata:\n  version: 1.0\n"
            f"  metabench_group: {_q(name)}\n  metabench_way: {_q(way or 'own')}\n  limit: {_q(limit)}\n")
    path = outdir / f"{export_name}.yaml"
    safe_paths.write_text(outdir, path, text)
    return Exported(export_name, path, sum(e.items for e in members), "group", notes, shared, name, way,
                    [e.task for e in members])


def _reported(yaml_text: str) -> list[tuple[str, str]]:
    """The (metric, filter) pairs lm-eval reports for a task written here: each ``metric_list`` entry under each
    ``filter_list`` pipeline's name (``none`` without one)."""
    filters = re.findall(r"^  - name: (\S+)$", yaml_text, re.M) or ["none"]
    metrics = re.findall(r"^  - metric: (\S+)$", yaml_text, re.M)
    return [(metric, filt) for filt in filters for metric in metrics]


def _units(task) -> list[tuple[str, str | None]]:
    """What of ``task`` is exported: the task itself where its own kind is prompted (None: no section), and
    each decoder section with a prompted kind of its own, as ``<task>_scored`` / ``<task>_generated``."""
    from ..answering import SECTIONS

    config = task.config
    units: list[tuple[str, str | None]] = []
    if config.kind in ("choice", "generation"):
        units.append((task.name, None))
    for way, key in SECTIONS.items():
        section = getattr(config.protocol, key, None)
        if section is not None and section.kind in ("choice", "generation") and section.kind != config.kind:
            units.append((f"{task.name}_{way}", key))
    return units


def _export_one(registry, task, name: str, section_key: str | None, outdir: Path, limit: int | None,
                data_dir: Path | None) -> Exported:
    """One lm-eval task: the task's own prompted kind (``section_key`` None), or one of its decoder sections."""
    from ..answering import section_sha256
    from ..jobs import build_kind, prepare

    config = task.config
    section = None
    kind = build_kind(registry, task, section_key) if section_key else None
    data = prepare(registry, task, limit=limit, data_dir=data_dir, kind=kind)  # the kind and data the runner uses
    items = data.test.items
    if section_key is None:
        kind = data.kind
        decoder = config.protocol.decoder
        if config.kind == "choice":
            yaml_text, rows, out_type, notes = _choice(name, kind, items)
        else:
            yaml_text, rows, out_type, notes = _generation(name, kind, items)
    else:
        kind = data.kind.prompted  # the section's own kind, built from the task's items, labels and the section
        decoder = kind.decoder
        if kind.request_type() is ChoiceRequest:
            yaml_text, rows, out_type, notes = _scored(task, kind, items)
        else:
            yaml_text, rows, out_type, notes = _generated(task, kind, items)
        section = getattr(config.protocol, section_key)
        notes.insert(0, f"the {'scored' if out_type == 'multiple_choice' else 'generated'} way of '{task.name}' "
                        f"(protocol.{section_key}; prompt: {section.prompt_source or 'not named'})")
    data_path = outdir / "data" / f"{name}.jsonl"
    safe_paths.write_text(outdir, data_path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    if decoder is not None and decoder.chat_template:
        notes.append("uses the chat template in metabench: run lm_eval with --apply_chat_template"
                     + (" and --system_instruction (the task's system message)" if decoder.system else ""))
    header = (
        f"# Exported by metabench from task '{task.name}' (config hash {task.hash[:16]}"
        + (f", protocol.{section_key} sha256 {section_sha256(section)[:16]}" if section_key else "")
        + f"); {len(rows)} items{' (--limit ' + str(limit) + ')' if limit is not None else ''}.\n"
        + "".join(f"# note: {n}\n" for n in notes)
    )
    tags = [EXPORT_TAG] + [f"{EXPORT_TAG}_{t}" for t in config.tag]
    common = (
        f"task: {name}\n"
        f"tag: {_q(tags)}\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {_q(str(data_path))}\n"
        "test_split: test\n"
        "doc_to_text: query\n"
    )
    meta = (
        "metadata:\n"
        f"  version: {float(config.metadata.version)}\n"
        f"  metabench_task: {_q(task.name)}\n"
        + (f"  metabench_protocol: {_q(section_key)}\n  metabench_section_sha256: {_q(section_sha256(section))}\n"
           if section_key else "")
        + f"  metabench_config_hash: {_q(task.hash)}\n"
        f"  limit: {_q(limit)}\n"
    )
    path = outdir / f"{name}.yaml"
    safe_paths.write_text(outdir, path, header + common + yaml_text + meta)
    way = "" if section_key is None else ("scored" if out_type == "multiple_choice" else "generated")
    return Exported(name, path, len(rows), out_type, notes, _reported(yaml_text), task.name, way)


def _choice(name, kind, items):
    rows = []
    for item in items:
        request = kind.request(item)
        rows.append({"id": item.id, "query": request.context, "choices": list(request.options), "gold": int(kind.gold(item))})
    notes = []
    if kind.args.scoring == "per_byte":
        notes.append("metabench scores per byte: compare with lm-eval's acc_norm")
    yaml_text = (
        "output_type: multiple_choice\n"
        "doc_to_choice: choices\n"
        "doc_to_target: gold\n"
        'target_delimiter: ""\n'
        "num_fewshot: 0\n"
        "metric_list:\n" + _metric("acc") + _metric("acc_norm")
    )
    return yaml_text, rows, "multiple_choice", notes


def _generation(name, kind, items):
    args = kind.args
    decoder = kind.decoder
    notes = []
    rows = []
    if args.mode == "rank":
        until, max_toks, temperature = ['"', "\n"], args.max_word_tokens + 1, 0.0
        process, metrics = "process_rank_top1", _metric("acc_at_1") + _metric("parse_ok")
        notes.append("ranking task: exported as greedy generation scored by top-1 accuracy (acc_at_1); "
                     "MRR and Recall@k need next-token top-k, which lm-eval does not expose")
    else:
        until, max_toks, temperature = list(decoder.until), decoder.max_new_tokens, decoder.temperature
        if args.parser in ("word_list", "marked"):
            process = "process_tags"
            metrics = _metric("span_f1", "f1") + _metric("token_f1", "f1") + _metric("parse_ok")
        else:
            process = f"process_{args.parser}"
            metrics = _metric("acc") + _metric("parse_ok")
        if temperature > 0 and not (isinstance(decoder.seeds, int) and decoder.seeds <= 1):
            notes.append(f"metabench samples {decoder.seeds} seeded runs; this export is one run (repeats: 1)")
    for item in items:
        request = kind.request(item)
        gold = kind.gold(item)
        row = {"id": item.id, "query": request.prompt, "gold": gold, "parser": args.parser}
        if args.mode == "rank":
            row["parser"] = "rank_top1"
        elif args.parser == "label":
            row.update(labels=list(kind.config.labels.names), aliases=dict(args.aliases))
        elif args.parser == "letter":
            row["letters"] = args.letters
        elif args.parser in ("word_list", "marked"):
            row.update(words=list(item.words), positive=kind.config.labels.positive, mark=args.mark,
                       close_mark=args.close_mark)
        rows.append(row)
    gen = {"until": until, "max_gen_toks": max_toks, "do_sample": temperature > 0, "temperature": temperature}
    yaml_text = (
        "output_type: generate_until\n"
        "doc_to_target: gold\n"
        "num_fewshot: 0\n"
        "repeats: 1\n"
        f"generation_kwargs: {_q(gen)}\n"
        f"process_results: !function {UTILS_NAME}.{process}\n"
        "metric_list:\n" + metrics
    )
    return yaml_text, rows, "generate_until", notes


def _scored(task, kind, items):
    """A decoder section of ``kind: choice``: ``multiple_choice`` over the section's options. Where the task ranks
    by one label's F1 (two labels, ``f1``), that label's option goes second, so lm-eval's ``f1`` (scikit-learn's
    binary F1 of choice 1) is the task's primary metric; each option is scored on its own, so the order changes
    no log-likelihood."""
    yaml_text, rows, out_type, notes = _choice(task.name, kind, items)
    config = task.config
    labels = list(kind.args.option_labels or [])
    positive = config.labels.positive if config.labels is not None else None
    if config.primary_metric == "f1" and len(labels) == 2 and positive in labels:
        if labels.index(positive) == 0:
            for row in rows:
                row["choices"].reverse()
                row["gold"] = 1 - row["gold"]
        yaml_text += "  - metric: f1\n    aggregation: f1\n    higher_is_better: true\n"  # lm-eval's own
        notes.append(f"f1 is the F1 of '{positive}' (the second choice), metabench's primary metric")
    elif config.primary_metric != "accuracy":
        notes.append(f"metabench ranks this task by {config.primary_metric}, which lm-eval's multiple_choice metrics "
                     "do not compute: compare acc")
    return yaml_text, rows, out_type, notes


#: What a strict parser strips from both ends of an answer (metabench.kinds.parsers._STRICT_EDGES), as a class.
_EDGE = "[\\s\"'‘’“”*_`]"
#: What lm-eval's filters write for an answer the strict parser does not read.
INVALID_ANSWER = "[invalid]"


def _generated(task, kind, items):
    """A decoder section of ``kind: generation`` read by a strict parser: a label or a letter as an lm-eval
    ``regex`` filter anchored at both ends (what the parser strips allowed around it) scored by ``exact_match``;
    a list of words, which lm-eval cannot align to the sentence, by metabench's parser in ``process_results``."""
    import re

    args, decoder, config = kind.args, kind.decoder, task.config
    notes = [f"the format-failure rate (answers the strict parser does not read) is the share of "
             f"'{INVALID_ANSWER}' among the filtered answers in lm-eval's samples (--log_samples); lm-eval does not "
             "report it as a metric"] if args.parser in ("label_strict", "letter_strict") else []
    rows = []
    for item in items:
        request = kind.request(item)
        row = {"id": item.id, "query": request.prompt, "gold": kind.gold(item)}
        if args.parser == "word_list_strict":
            row.update(parser=args.parser, words=list(item.words), positive=config.labels.positive)
        rows.append(row)
    gen = {"until": list(decoder.until), "max_gen_toks": decoder.max_new_tokens, "do_sample": False,
           "temperature": 0.0}
    head = ("output_type: generate_until\ndoc_to_target: gold\nnum_fewshot: 0\nrepeats: 1\n"
            f"generation_kwargs: {_q(gen)}\n")
    if args.parser == "word_list_strict":
        notes.append("lm-eval's filters cannot align a list of words back to the sentence: scored by "
                     f"{UTILS_NAME}.process_tags with metabench's word_list_strict parser (parse_ok: 1 - the "
                     "format-failure rate)")
        metrics = _metric("span_f1", "f1") + _metric("token_f1", "f1") + _metric("parse_ok")
        return (head + f"process_results: !function {UTILS_NAME}.process_tags\nmetric_list:\n" + metrics,
                rows, "generate_until", notes)
    if args.parser == "letter_strict":
        answer = f"(?:option\\s+)?\\(?([{re.escape(args.letters)}])\\)?"
        mapping = {letter.lower(): letter for letter in args.letters}
    elif args.parser == "label_strict":
        names = {str(label).casefold(): str(label) for label in config.labels.names}
        for alias, label in args.aliases.items():
            names.setdefault(str(alias).casefold(), str(label))
        answer = "(" + "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True)) + ")"
        mapping = names
        notes.append("lm-eval lowercases where metabench case-folds and normalises Unicode (NFKC) first: an answer "
                     "in full-width letters or with a ligature reads in metabench only")
        if config.primary_metric != "accuracy":
            notes.append(f"metabench ranks this task by {config.primary_metric} of the parsed labels; lm-eval's "
                         "exact_match is their accuracy")
    else:
        raise MetabenchError(f"task '{task.name}': protocol.decoder_generated's parser '{args.parser}' has no lm-eval "
                             "form here", hint="export a strict parser (label_strict, letter_strict, word_list_strict)")
    pattern = f"(?i)^{_EDGE}*{answer}{_EDGE}*\\.?{_EDGE}*$"
    filters = (
        "filter_list:\n"
        "  - name: strict\n"
        "    filter:\n"
        f"      - function: regex\n        regex_pattern: {_q(pattern)}\n        group_select: 0\n"
        f"        fallback: {_q(INVALID_ANSWER)}\n"
        "      - function: lowercase\n"
        f"      - function: map\n        mapping_dict: {_q(mapping)}\n        default_value: {_q(INVALID_ANSWER)}\n"
        "      - function: take_first\n"
    )
    metrics = "metric_list:\n  - metric: exact_match\n    aggregation: mean\n    higher_is_better: true\n"
    return head + filters + metrics, rows, "generate_until", notes


def _readme(outdir: Path, exported: list[Exported], skipped, groups: list[Exported], partial: list[str]) -> None:
    first = groups[0].task if groups else exported[0].task
    lines = [
        "# metabench tasks exported for lm-evaluation-harness",
        "",
        "Run, for example:",
        "",
        "```",
        f"lm_eval --model hf --model_args pretrained=PATH --tasks {first} --include_path {outdir} --log_samples --output_path out",
        "```",
        "",
        "Documents are in `data/` (absolute paths in the YAML files: export again after moving this folder).",
        f"Generation tasks are scored by `{UTILS_NAME}.py`, which imports metabench's parsers.",
        "",
        "| task | output type | items | notes |",
        "|---|---|---|---|",
    ]
    lines += [f"| {e.task} | {e.output_type} | {e.items} | {'; '.join(e.notes)} |" for e in exported]
    if groups:
        lines += ["", "Groups (metabench's `aggregate: mean`: lm-eval runs every member and prints the unweighted mean "
                  "of each metric over the members, each member's metric computed on its own items, as metabench's "
                  "group row; the ± lm-eval prints beside it combines the members' standard errors, not metabench's "
                  "std over seeds):", "", "| group | members | items |", "|---|---|---|"]
        lines += [f"| {g.task} | {', '.join(g.members)} | {g.items} |" for g in groups]
    if partial:
        lines += ["", "Groups not written (part of their members selected): " + ", ".join(partial)]
    if skipped:
        lines += ["", "Not exported: " + ", ".join(f"{n} ({why})" for n, why in skipped)]
    safe_paths.write_text(outdir, outdir / "README.md", "\n".join(lines) + "\n")
