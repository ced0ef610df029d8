"""Generation: the model writes text; a parser reads the answer off it; metrics score the parsed answers.

Two modes:

- ``generate`` (default): a ``GenerateRequest`` with the task's stop strings, token limit and temperature
  (``protocol.decoder``). The adapter's answer is the raw text, stored as is; the ``parser``
  (``metabench.kinds.parsers``) reads it at scoring time: ``label`` (NLI, metaphorical/literal), ``letter``
  (A-D), ``word``, ``word_list`` and ``marked`` (token tagging: words mapped back to the sentence), ``raw``.
  An output the parser cannot read is scored as wrong; ``parse_ok`` is in every item's scores, the
  aggregate has ``parse_rate`` and the ids of unreadable outputs are logged.
- ``rank`` (MUNCH paraphrase generation): a ``RankRequest``: the ``rank_k`` most probable next tokens, each
  greedily completed to a word, give a ranked candidate list scored with ``mrr`` / ``recall_at_k`` /
  ``accuracy_at_1``. With ``complete: matching`` only tokens that begin an acceptable answer are completed
  (the paper's procedure); ``all`` completes every token (no gold passed to the adapter).
"""

from __future__ import annotations

import json
import logging
from typing import Literal

from pydantic import Field

from ..errors import ConfigError
from ..requests import GenerateRequest, RankRequest
from ..metrics.tagging import spans
from . import parsers
from .base import Kind, item_field
from .prompts import PromptedArgs, PromptedMixin

log = logging.getLogger("metabench.kinds.generation")

TAG_PARSERS = ("word_list", "word_list_strict", "marked")


class GenerationArgs(PromptedArgs):
    mode: Literal["generate", "rank"] = Field("generate", description="free generation, or next-token ranking (MUNCH)")
    parser: Literal["label", "label_strict", "label_token", "letter", "letter_strict", "word", "word_list",
                    "word_list_strict", "marked", "raw"] = Field(
        "label", description="how an answer is read off the generated text (label: the first label word anywhere, "
        "lenient; label_strict: the whole answer is one label; label_token: the first whitespace token that is a "
        "label, the metaphorLLM authors' map_labels; letter / letter_strict and word_list / word_list_strict likewise)"
    )
    gold_field: str = Field("label", description="item attribute holding the gold (unless the preparer gives it)")
    label_map: dict[str, str] = Field(default_factory=dict, description="raw gold label -> task label")
    aliases: dict[str, str] = Field(default_factory=dict, description="label parser: other words -> label")
    letters: str = Field("ABCD", description="letter parser: the option letters")
    mark: str = Field("*", description="marked parser: opening marker")
    close_mark: str | None = Field(None, description="marked parser: closing marker (default: same as mark)")
    rank_k: int = Field(10, ge=1, le=100, description="rank mode: next tokens ranked")
    complete: Literal["matching", "all"] = Field("matching", description="rank mode: which tokens are completed")
    max_word_tokens: int = Field(8, ge=1, description="rank mode: token limit of a word completion")


class Generation(PromptedMixin, Kind):
    name = "generation"
    Args = GenerationArgs

    @classmethod
    def check_config(cls, config, raw) -> None:
        cls.check_prompt(config, raw)
        args = GenerationArgs.model_validate(config.kind_args)
        if args.parser in ("label", "label_strict", "label_token") and args.mode == "generate" and not config.labels.names:
            raise ConfigError(
                f"{raw.where('labels')}: the label parser needs `labels.names`",
                hint="e.g. labels: {names: [entailment, neutral, contradiction]}",
            )
        if args.parser in TAG_PARSERS and not config.labels.positive:
            raise ConfigError(f"{raw.where('labels')}: parser '{args.parser}' needs `labels.positive` (e.g. METAPHOR)")

    # ----------------------------------------------------------------------------------------- items

    def gold(self, item):
        gold = self.fields(item).get("gold") if self.args.prepare else None
        if gold is None:
            gold = item_field(item, self.args.gold_field)
        if self.args.mode == "rank":
            return [gold] if isinstance(gold, str) else list(gold)
        if self.args.parser in TAG_PARSERS:
            return list(gold)
        if self.args.parser in ("letter", "letter_strict") and isinstance(gold, int):
            return self.args.letters[gold]
        gold = str(gold)
        return self.args.label_map.get(gold, gold)

    def request_type(self) -> type:
        return RankRequest if self.args.mode == "rank" else GenerateRequest

    def request(self, item):
        decoder = self.decoder
        if self.args.mode == "rank":
            complete = None
            if self.args.complete == "matching":
                complete = tuple(sorted({str(a) for a in self.gold(item)}))
            return RankRequest(
                prompt=self.prompt(item),
                k=self.args.rank_k,
                max_word_tokens=self.args.max_word_tokens,
                complete=complete,
                chat=decoder.chat_template,
                system=self.system_prompt(item),
            )
        return GenerateRequest(
            prompt=self.prompt(item),
            until=tuple(decoder.until),
            max_new_tokens=decoder.max_new_tokens,
            temperature=decoder.temperature,
            chat=decoder.chat_template,
            system=self.system_prompt(item),
        )

    def fewshot_target(self, item) -> str:
        gold = self.gold(item)
        if self.args.parser in ("word_list", "word_list_strict"):  # the answer the prompt asks for: a list, or none
            return " " + (", ".join(" ".join(item.words[i] for i in range(first, last + 1))
                                   for _, first, last in spans(gold, self.config.labels.positive)) or "none")
        if isinstance(gold, (list, tuple)):
            gold = gold[0] if self.args.mode == "rank" else " ".join(
                w for w, t in zip(item.words, gold) if t != "O"
            )
        return f" {gold}"

    # ----------------------------------------------------------------------------------------- parsing

    def parse(self, item, prediction) -> parsers.Parsed:
        """Read one answer; never raises on model output."""
        args = self.args
        if args.mode == "rank":
            ok = isinstance(prediction, list)
            return parsers.Parsed(parsers.rank_candidates(prediction if ok else []), ok, "ok" if ok else "not_a_ranking")
        text = prediction if isinstance(prediction, str) else ("" if prediction is None else str(prediction))
        positive = self.config.labels.positive or "METAPHOR"
        if args.parser == "label":
            return parsers.parse_label(text, self.config.labels.names, args.aliases)
        if args.parser == "label_strict":
            return parsers.parse_label_strict(text, self.config.labels.names, args.aliases)
        if args.parser == "letter_strict":
            return parsers.parse_letter_strict(text, args.letters)
        if args.parser == "label_token":
            return parsers.parse_label_token(text, self.config.labels.names, args.aliases)
        if args.parser == "letter":
            return parsers.parse_letter(text, args.letters)
        if args.parser == "word":
            return parsers.parse_word(text)
        if args.parser == "word_list":
            return parsers.parse_word_list(text, item.words, positive)
        if args.parser == "word_list_strict":
            return parsers.parse_word_list_strict(text, item.words, positive)
        if args.parser == "marked":
            return parsers.parse_marked(text, item.words, positive, args.mark, args.close_mark)
        stripped = text.strip()
        return parsers.Parsed(stripped, bool(stripped), "ok" if stripped else "empty")

    def answer_key(self, item, prediction) -> str:
        """Draws that parse to the same answer are one answer (" Metaphorical." and "metaphorical"); every
        output the parser cannot read is one answer too (all are scored as wrong)."""
        parsed = self.parse(item, prediction)
        return json.dumps(parsed.value, sort_keys=True, ensure_ascii=False) if parsed.ok else "\x00unreadable"

    def score(self, item, gold, prediction) -> dict[str, float]:
        parsed = self.parse(item, prediction)
        scores = {"parse_ok": float(parsed.ok)}
        if self.args.mode == "rank":
            from ..metrics.ranking import answer_recall_at_k, rank

            r = rank(gold, parsed.value)
            scores.update({
                "reciprocal_rank": 0.0 if r is None else 1.0 / r,
                "rank": float(r or 0),
                "correct": float(r == 1),
                "recall_at_5": answer_recall_at_k(gold, parsed.value, 5),
                "recall_at_10": answer_recall_at_k(gold, parsed.value, 10),
            })
        elif self.args.parser in TAG_PARSERS:
            from ..metrics.tagging import span_counts, token_counts

            positive = self.config.labels.positive
            scores.update({f"span_{k}": float(v) for k, v in span_counts(gold, parsed.value, positive=positive).items()})
            scores.update({f"token_{k}": float(v) for k, v in token_counts(gold, parsed.value, positive=positive).items()})
            scores["correct"] = float(tuple(gold) == tuple(parsed.value))
        elif self.args.parser == "word":
            scores["correct"] = float(parsers.norm_word(parsed.value) == parsers.norm_word(str(gold)))
        else:
            scores["correct"] = float(parsed.value == gold)
        return scores

    def metric_context(self, items: list) -> dict:
        if self.args.parser in TAG_PARSERS:
            return {"words": [i.words for i in items], "positive": self.config.labels.positive}
        return {}

    def metric_input(self, item, gold, prediction):
        """Metrics read the parsed answer (a label, tags, a word, a ranking)."""
        return gold, self.parse(item, prediction).value

    def aggregate(self, items: list, golds: list, preds: list) -> dict[str, float]:
        """The metrics on parsed answers, plus how many outputs could be parsed (``warn_unusable`` reports them)."""
        parsed = [self.parse(i, p) for i, p in zip(items, preds)]
        values = [x.value for x in parsed]
        out = self.metric_values(items, golds, values)
        out.update(self.breakdown(items, golds, values))
        out["parse_rate"] = sum(x.ok for x in parsed) / len(parsed)
        out["invalid_outputs"] = float(sum(not x.ok for x in parsed))
        return out

    def warn_unusable(self, items: list, preds_by_seed: dict[int, list]) -> None:
        """One warning line for the task, whatever its seed count: how many outputs could not be parsed, per seed
        where there are several, and the first few; each one is logged at INFO level (``--verbose``)."""
        bad = [(seed, i.id, p) for seed, preds in preds_by_seed.items()
               for i, p in zip(items, preds) if not self.parse(i, p).ok]
        if not bad:
            return
        total = len(items) * len(preds_by_seed)
        per_seed = ""
        if len(preds_by_seed) > 1:
            counts = ", ".join(f"seed {seed}: {sum(s == seed for s, _, _ in bad)}" for seed in preds_by_seed)
            per_seed = f" ({len(items)} items × {len(preds_by_seed)} seeds; {counts})"
        examples = "; ".join(f"{item_id}: {str(p)[:60]!r}" for _, item_id, p in bad[:3])
        log.warning("%s: %d of %d outputs unparsed%s, scored as wrong, e.g. %s",
                    self.config.task, len(bad), total, per_seed, examples)
        for seed, item_id, p in bad:
            log.info("unparsed output %s (seed %s): %r", item_id, seed, str(p)[:200])
