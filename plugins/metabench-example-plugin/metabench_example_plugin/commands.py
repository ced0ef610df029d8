"""A CLI verb: ``metabench cue-words SENTENCE...`` says which cue words the ``cue-words`` adapter would see.

``add_commands(subparsers)`` adds the verb to metabench's argparse parser; the handler returns the exit
status. Keep this module light (``metabench --help`` imports it): anything heavy belongs in the handler.
"""

from __future__ import annotations


def add_commands(subparsers) -> None:
    verb = subparsers.add_parser("cue-words", help="show the cue words the cue-words model finds in sentences")
    verb.add_argument("sentences", nargs="+", metavar="SENTENCE")
    verb.add_argument("--words", help="cue words joined by '+' (default: the model's own list)")
    verb.set_defaults(func=run)


def run(args) -> int:
    from metabench.plugin_api import MetabenchError

    from .adapter import DEFAULT_CUES

    cues = tuple(args.words.split("+")) if args.words else DEFAULT_CUES
    if not all(cues):
        raise MetabenchError(f"--words {args.words!r}: an empty cue word", hint="e.g. --words grasp+storm")
    for sentence in args.sentences:
        hits = [token for token in sentence.lower().split() if token.startswith(cues)]
        label = "metaphorical" if hits else "literal"
        print(f"{label}\t{', '.join(hits) or '-'}\t{sentence}")
    return 0
