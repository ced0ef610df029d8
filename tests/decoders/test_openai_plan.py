"""``--dry-run`` with an API model: the prompts it would be sent, bounds on their tokens, and, given prices per
million tokens as model arguments, a bound on the cost. No server: a plan sends nothing."""

from __future__ import annotations

from metabench.dry_run import plan_lines, plan_run

PRICED = "openai:m,price_in=0.15,price_out=0.60,max_length=512"


def _plan(registry, tmp_path, task: str, *models: str):
    return plan_run(task, list(models), limit=6, output_dir=tmp_path / "runs", registry=registry)


def test_generation_requests_token_bound_and_cost(decoder_registry, tmp_path):
    # toy_generate: 6 items × 2 seeds, one prompt each, answers of at most 4 tokens (max_new_tokens)
    plan = _plan(decoder_registry, tmp_path, "toy_generate", PRICED, "openai:m")
    priced = next(job for job in plan.jobs if job.model == PRICED)
    assert priced.api_requests == 12 and priced.api_tokens == (12 * 512, 12 * 4) and priced.token_bound == 12 * 516
    lines = "\n".join(plan_lines(plan))
    cost = (12 * 512 * 0.15 + 12 * 4 * 0.60) / 1e6
    assert (f"API {PRICED}: 12 request(s)" in lines
            and "≤ 6,144 tokens in (every prompt at max_length=512) and ≤ 48 out" in lines
            and f"cost ≤ {cost:,.4f} at price_in=0.15, price_out=0.6 per million tokens" in lines)
    # without prices: the bound on tokens (lm-eval's default context limit), and how to get a cost
    assert "API openai:m: 12 request(s)" in lines and "max_length=2048" in lines
    assert "add price_in=,price_out= (per million tokens) to the model's arguments for a cost bound" in lines


def test_ranking_counts_the_completions_only_completions_sends(decoder_registry, tmp_path):
    """toy_rank asks for the top 5 first tokens: chat takes them as they are, completions completes each."""
    plan = _plan(decoder_registry, tmp_path, "toy_rank", "openai:m,api=chat", "openai:m,api=completions")
    requests = {job.model: job.api_requests for job in plan.jobs}
    assert requests == {"openai:m,api=chat": 6, "openai:m,api=completions": 6 * (1 + 5)}
