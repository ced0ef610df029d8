"""``metabench data ls | pull | verify | stats | manifest``: the data layer's command-line verbs.

``add_commands(subparsers)`` adds the ``data`` command to the main CLI's subparsers; every verb sets
``func(args) -> int`` (the exit code). Imports stay inside the verbs so that ``metabench --help`` does not
load plugins or tabulate. ``--data-dir`` is accepted after the verb too (default: the main CLI's value, else
``METABENCH_DATA_DIR``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_commands(subparsers) -> None:
    data = subparsers.add_parser(
        "data", help="list, fetch, verify and describe datasets",
        description="List, fetch (files missing from the mirror, into the cache), verify (hashes and paper counts) and describe datasets."
    )
    verbs = data.add_subparsers(dest="data_verb", metavar="VERB")
    data.set_defaults(func=lambda args: (data.print_help(), 2)[1])

    def verb(name: str, func, help_text: str):
        parser = verbs.add_parser(name, help=help_text, description=help_text)
        parser.add_argument(
            "--data-dir", type=Path, default=argparse.SUPPRESS,
            help="mirror laid out like shared/data (default: METABENCH_DATA_DIR, then the cache)",
        )
        parser.set_defaults(func=func)
        return parser

    verb("ls", cmd_ls, "datasets, their files, licence and whether they are present locally")
    pull = verb("pull", cmd_pull, "download a dataset's files missing from the mirror (verified) into the user cache")
    pull.add_argument("names", nargs="+", metavar="NAME")
    pull.add_argument("--force", action="store_true", help="download again even if a verified copy exists")
    check = verb("verify", cmd_verify, "hash every file and recompute the counts the papers print")
    check.add_argument("names", nargs="*", metavar="NAME", help="datasets to check (default: all, or those of --tasks)")
    check.add_argument("--tasks", metavar="SELECTION",
                       help="also the datasets these tasks read (names, globs, tags, groups), their `hf_dataset` "
                       "sources included: a source's files, and the rows per split its card or dataset_info declares")
    check.add_argument("--files", action="store_true", help="list every file, not only the failing ones")
    check.add_argument("--no-counts", action="store_true", help="only check the files' hashes")
    stats = verb("stats", cmd_stats, "Meta4XNLI-style corpus tables for a tagging or NLI dataset")
    stats.add_argument("name", metavar="NAME")
    stats.add_argument("--split", action="append", dest="splits", help="split(s) to describe (default: all)")
    stats.add_argument("--args", nargs="*", default=[], metavar="K=V", help="loader arguments, e.g. lang=es")
    manifest = verbs.add_parser(
        "manifest", help="hash every file of a folder into a manifest a dataset spec is built from",
        description="Hash every file below DIR (sha256, encoding) and write DIR/manifest.json; a plugin ships it "
        "with its files and builds its DatasetSpec with metabench.data.manifests.manifest_files().",
    )
    manifest.add_argument("folder", type=Path, metavar="DIR")
    manifest.add_argument("-o", "--output", type=Path, help="where to write (default: DIR/manifest.json)")
    manifest.add_argument("--family", help="the manifest's name (default: the folder's name)")
    manifest.add_argument("--repo", default="", help="upstream repository (owner/name) the files come from")
    manifest.add_argument("--commit", default="", help="the upstream commit the files were taken at")
    manifest.add_argument("--upstream-prefix", default="", help="upstream path of DIR inside --repo (e.g. data/)")
    manifest.add_argument("--check", action="store_true", help="compare with the existing manifest, write nothing")
    manifest.set_defaults(func=cmd_manifest)


def _data_dir(args) -> Path | None:
    return getattr(args, "data_dir", None)


def _specs(names=None) -> list:
    from ..plugins import default_registry  # noqa: PLC0415

    registry = default_registry()
    if not names:
        return [entry.target for entry in registry.entries("dataset")]
    return [registry.get("dataset", name).target for name in dict.fromkeys(names)]


def _task_datasets(selection: str | None) -> list[str]:
    """The datasets a --tasks selection reads; loading the tasks registers their `datasets` sources."""
    if not selection:
        return []
    from ..config.index import TaskIndex  # noqa: PLC0415
    from ..plugins import default_registry  # noqa: PLC0415
    from ..task_facts import datasets_used  # noqa: PLC0415

    registry = default_registry()
    index = TaskIndex(registry)
    return [used["name"] for name in index.select(selection) for used in datasets_used(registry, index.load(name).slices)]


def table(rows: list[dict] | list[list], headers="keys") -> str:
    """tabulate when installed, else a plain aligned table (the data layer must not need it to work)."""
    try:
        from tabulate import tabulate  # noqa: PLC0415
    except ImportError:
        if rows and isinstance(rows[0], dict):
            headers, rows = list(rows[0]), [list(r.values()) for r in rows]
        cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)
    return tabulate(rows, headers=headers, floatfmt=".2f")


def cmd_ls(args) -> int:
    from ..data.resolve import locate_declared  # noqa: PLC0415

    rows = []
    for spec in _specs():
        where = _where_summary(locate_declared(f, _data_dir(args), spec.root) for f in spec.files)
        rows.append(
            {
                "dataset": spec.name,
                "files": len(spec.files),
                "local": where,
                "splits": ", ".join(spec.splits),
                "licence": spec.licence,
            }
        )
    print(table(rows) if rows else "no datasets registered")
    return 0


def _where_summary(found) -> str:
    """'mirror 30/30', 'cache 2/30 (28 missing)', 'missing' — where a dataset's files are."""
    found = list(found)
    kinds: dict[str, int] = {}
    for hit in found:
        kinds[hit[0] if hit else "missing"] = kinds.get(hit[0] if hit else "missing", 0) + 1
    if kinds.get("missing") == len(found):
        return "missing"
    return ", ".join(f"{k} {n}/{len(found)}" for k, n in kinds.items())


def _pull_summary(fetched: int, present: dict[str, int], cache: Path) -> str:
    """Where the files are after a pull: '2 downloaded into CACHE, 28 already in the mirror'."""
    parts = [f"{fetched} downloaded into {cache}"] if fetched else []
    parts += [f"{n} already in the {where}" for where, n in sorted(present.items())]
    return ", ".join(parts) or "no files"


def cmd_pull(args) -> int:
    from ..errors import DataError  # noqa: PLC0415
    from ..data.download import download_file  # noqa: PLC0415
    from ..data.resolve import cache_dir, locate, verify_file  # noqa: PLC0415

    failures = 0
    for spec in _specs(args.names):
        fetched, present = 0, {}  # present: "mirror"/"cache" -> count of verified files already there
        for declared in spec.files:
            found = None if args.force else locate(declared, _data_dir(args))
            try:
                if found is not None:
                    try:
                        verify_file(found[1], declared)
                        present[found[0]] = present.get(found[0], 0) + 1
                        continue
                    except DataError:
                        if found[0] == "mirror":
                            raise
                download_file(declared, cache_dir() / declared.path)
                fetched += 1
            except DataError as exc:
                failures += 1
                print(f"metabench: error: {exc}", file=sys.stderr)
        print(f"{spec.name}: {_pull_summary(fetched, present, cache_dir())}")
    return 1 if failures else 0


def cmd_verify(args) -> int:
    from ..data.verify import verify_dataset  # noqa: PLC0415

    summary, details = [], []
    all_ok = True
    for spec in _specs([*args.names, *_task_datasets(args.tasks)]):
        report = verify_dataset(spec, _data_dir(args), counts=not args.no_counts)
        all_ok &= report.ok
        bad_files = [f for f in report.files if not f.ok]
        places = sorted({f.where for f in report.files if f.where})
        passed = sum(1 for c in report.checks if c.ok)
        summary.append(
            {
                "dataset": spec.name,
                "files": f"{len(report.files) - len(bad_files)}/{len(report.files)} ok",
                "from": ",".join(places) or "-",
                "counts": f"{passed}/{len(report.checks)} ok" if report.checks else f"- ({report.skipped})",
                "status": "ok" if report.ok else "FAIL",
            }
        )
        for f in report.files if args.files else bad_files:
            short = f.status == "ok"  # a mismatch shows both hashes in full
            details.append({"dataset": spec.name, "file / check": f.path,
                            "expected": f"sha256 {f.expected[:12]}..." if short else f.expected,
                            "actual": f"sha256 {f.actual[:12]}..." if short else f.actual or "-",
                            "status": f.status, "detail": f.detail or f.where})
        for c in report.checks:
            width = None if not c.ok else 60  # a failing check shows its numbers in full
            details.append({"dataset": spec.name, "file / check": c.name, "expected": _cell(c.expected, width),
                            "actual": _cell(c.actual, width), "status": "ok" if c.ok else "FAIL",
                            "detail": c.detail})
    print(table(summary) if summary else "no datasets registered")
    if details:
        print()
        print(table(details))
    print()
    print("all datasets verified" if all_ok else "verification FAILED")
    return 0 if all_ok else 1


def _cell(value, width: int | None):
    if isinstance(value, (int, float)) or width is None:
        return value
    text = str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def cmd_stats(args) -> int:
    from ..errors import ConfigError  # noqa: PLC0415
    from ..data.context import DataContext  # noqa: PLC0415
    from ..data.items import NLIPair, TaggedSentence  # noqa: PLC0415
    from ..data.load import check_args  # noqa: PLC0415
    from ..data.tables import metaphor_overlap, nli_rows, tagging_rows  # noqa: PLC0415
    from ..data.verify import parse_split_key  # noqa: PLC0415

    (spec,) = _specs([args.name])
    for raw in args.args:
        if "=" not in raw:
            raise ConfigError(f"--args expects key=value, got '{raw}'")
    _, loader_args = parse_split_key(":" + ",".join(args.args), spec)
    splits = args.splits or list(spec.splits)
    for split in splits:
        check_args(spec, split, loader_args, where="data stats")
    ctx = DataContext(spec, _data_dir(args))
    loaded = {split: ctx.load(split, **loader_args) for split in splits}
    sample = next((items[0] for items in loaded.values() if items), None)
    suffix = f" ({', '.join(args.args)})" if args.args else ""
    if isinstance(sample, TaggedSentence):
        rows = [{"split": s, **r} for s, items in loaded.items() for r in tagging_rows(items)]
        print(f"{spec.name}{suffix}: metaphor tokens and sentences (Meta4XNLI Tables 3/4)")
        print(table(rows))
        train = loaded.get("train")
        if train:
            overlap = [{"split": s, **metaphor_overlap(train, items)} for s, items in loaded.items()
                       if s not in ("train", "all")]
            if overlap:
                print(f"\n{spec.name}{suffix}: test metaphor tokens seen as metaphors in train")
                print(table(overlap))
        return 0
    if isinstance(sample, NLIPair):
        rows = [{"split": s, **r} for s, items in loaded.items() for r in nli_rows(items)]
        print(f"{spec.name}{suffix}: pairs per metaphor class (Meta4XNLI Table 5)")
        print(table(rows))
        return 0
    kind = type(sample).__name__ if sample is not None else "no items"
    print(f"{spec.name}: stats covers tagging (TaggedSentence) and NLI (NLIPair) datasets, not {kind}; "
          f"items per split: " + ", ".join(f"{s}={len(i)}" for s, i in loaded.items()))
    return 0


def cmd_manifest(args) -> int:
    """Write (or ``--check``) the manifest of a folder of data files."""
    import json  # noqa: PLC0415

    from ..data.manifests import MANIFEST_NAME, build_manifest, write_manifest  # noqa: PLC0415

    output = args.output or args.folder / MANIFEST_NAME
    if args.repo and not args.commit:
        from ..errors import MetabenchError  # noqa: PLC0415

        raise MetabenchError(f"--repo {args.repo} needs --commit (the pinned upstream commit the files come from)")
    manifest = build_manifest(args.folder, family=args.family, repo=args.repo, commit=args.commit,
                              upstream_prefix=args.upstream_prefix, exclude=(output.name,))
    count = sum(len(group["files"]) for group in manifest["groups"])
    if args.check:
        same = output.is_file() and json.loads(output.read_text(encoding="utf-8")) == manifest
        print(f"{output}: {count} files, {'up to date' if same else 'DIFFERS: write it again without --check'}")
        return 0 if same else 1
    print(f"{count} files hashed -> {write_manifest(manifest, output)}")
    return 0
