"""Check 4's verdicts, and the rebuild on the data's (`rebuild`), kept between builds (`verify`): a run whose
files, task and checking code did not change is not rebuilt metric by metric again.

Rebuilding every recorded metric from the samples is most of what verifying a run costs beyond reading it (a
leaderboard build of the 823 committed runs: ~7 % of its time). The verdict depends only on the run's
results.json, its samples, and the code and plugins that rebuild the metrics. results.json records the samples'
sha256, which check 1 matches with the file's bytes before check 4 runs, so the key is a digest of results.json
(whole), the metabench package's source and the plugins' versions: any change to either file, to the code or to
a plugin is a miss, and the run is checked in full. The file is only a cache: unreadable, it is ignored;
unwritable, it costs speed.
"""

from __future__ import annotations

import hashlib
import json

from ..atomic import write_atomically
from ..cache import cache_root
from ..job_memo import _package_source as package_source  # the source digest finished jobs are keyed by
from .stored import Run

FILE = "verified-metrics.json"
FORMAT = 2
#: Verdicts kept: the committed runs' several times over, so switching between checkouts keeps them.
MAX_ENTRIES = 20_000


class VerifiedMetrics:
    """The stored verdicts of check 4, read once; `save` writes the ones found or added since."""

    def __init__(self, registry):
        self._prefix = json.dumps({"format": FORMAT, "source": package_source(), "plugins": sorted(
            (p["name"], str(p.get("version")), p.get("status", "")) for p in registry.plugins)})
        self._path = cache_root() / FILE
        try:
            stored = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = {}
        self._stored: dict[str, list] = stored if isinstance(stored, dict) else {}
        self._changed = False
        self._added: dict[str, list] = {}

    def _key(self, run: Run, context: str) -> str:
        text = self._prefix + "\0" + context + "\0" + json.dumps(run.record.as_json(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, run: Run, context: str = "") -> tuple[list[str], list[str], list[str]] | None:
        """(problems, checked, unchecked) of a check on this run as last found, or None (check it). ``context``:
        ``""`` for check 4, ``"data"`` for the rebuild on the data (`rebuild`; the data is pinned by the file
        hashes results.json records, which check 5 matches first)."""
        found = self._stored.get(self._key(run, context))
        if not (isinstance(found, list) and len(found) == 3 and all(isinstance(part, list) for part in found)):
            return None
        return found[0], found[1], found[2]

    def put(self, run: Run, problems: list[str], checked: list[str], unchecked: list[str], context: str = "") -> None:
        key = self._key(run, context)
        self._stored.pop(key, None)  # re-inserted last: the newest are the ones `save` keeps
        self._stored[key] = self._added[key] = [list(problems), list(checked), list(unchecked)]
        self._changed = True

    def added(self) -> dict[str, list]:
        """The verdicts put since the last call: what a worker process hands back for `merge` (a build verifies
        runs in several processes; only the parent saves)."""
        found, self._added = self._added, {}
        return found

    def merge(self, entries: dict[str, list]) -> None:
        """Verdicts another process `put` (its `added`), kept as if put here."""
        for key, value in entries.items():
            self._stored.pop(key, None)
            self._stored[key] = value
            self._changed = True

    def save(self) -> None:
        if not self._changed:
            return
        kept = dict(list(self._stored.items())[-MAX_ENTRIES:])
        try:
            write_atomically(self._path, json.dumps(kept))
        except OSError:
            pass
