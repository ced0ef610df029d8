"""The one parser of ``name=value,name=value`` settings strings (``--sor``, ``--mine``, a count key's loader
arguments), so every such option splits, strips and reports a malformed part the same way."""

from __future__ import annotations

from collections.abc import Collection

from .errors import MetabenchError


def parse_pairs(text: str | None, *, what: str, known: Collection[str] | None = None,
                error: type[MetabenchError] = MetabenchError) -> dict[str, str]:
    """``"steps=300, tau=0.1"`` -> ``{"steps": "300", "tau": "0.1"}``: names and values stripped, empty parts
    skipped. A part without ``=``, (with ``known``) a name not in it, or a name given twice raises ``error``
    naming ``what``."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or (known is not None and name not in known):
            raise error(f"{what} {part!r} is not NAME=VALUE" + (" with a known NAME" if known is not None else ""),
                        hint=f"known settings: {', '.join(known)}" if known is not None else "e.g. lang=es,fold=3")
        if name in out:
            raise error(f"{what} {name} is given twice ({text!r})", hint=f"give {name} once")
        out[name] = value.strip()
    return out
