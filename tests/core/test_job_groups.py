"""How the parallel launchers cut a run into batches: by the datasets a job reads in any role, every job once,
large groups cut so no worker is left with all the work, largest batch first."""

from __future__ import annotations

from types import SimpleNamespace

from metabench.launch.job_groups import batches, data_key


def _job(**roles) -> SimpleNamespace:
    """A stand-in job: batching reads only ``job.task.slices`` (role -> [(dataset, split, args)])."""
    return SimpleNamespace(task=SimpleNamespace(slices={r: [(d, r, {}) for d in ds] for r, ds in roles.items()}))


def test_jobs_reading_the_same_datasets_share_a_batch_and_every_job_is_in_one():
    jobs = [_job(test=["a"]), _job(test=["b"]), _job(test=["a"], train=["a"]), _job(test=["a"], train=["c"]),
            _job(test=["b"])]
    out = batches(jobs, list(range(len(jobs))), workers=1)
    assert sorted(n for batch in out for n in batch) == [0, 1, 2, 3, 4]
    assert sorted(map(sorted, out)) == [[0, 2], [1, 4], [3]]
    assert [len(b) for b in out] == sorted((len(b) for b in out), reverse=True)  # largest first


def test_every_role_counts_including_the_fewshot_split():
    assert data_key(_job(test=["a"], fewshot=["z"])) == '["a", "z"]' != data_key(_job(test=["a"]))


def test_a_large_group_is_cut_for_the_workers():
    jobs = [_job(test=["a"])] * 12 + [_job(test=["b"])]
    out = batches(jobs, list(range(13)), workers=2)  # at most ceil(13 / (2 workers x 3)) = 3 jobs a batch
    assert max(map(len, out)) <= 3 and sorted(n for b in out for n in b) == list(range(13))
    assert all(len({data_key(jobs[n]) for n in batch}) == 1 for batch in out)
    assert len(batches(jobs, list(range(13)), workers=1)) < len(out)  # fewer workers, fewer cuts


def test_a_malformed_built_with_only_costs_the_grouping():
    """A plugin that gives one name as a string is read as that name; anything unusable groups by name."""
    specs = {"a": SimpleNamespace(built_with="b"), "b": SimpleNamespace(built_with=("a",)),
             "c": SimpleNamespace(built_with=(1, "x"))}
    registry = SimpleNamespace(resolve=lambda kind, name: specs[name])
    assert data_key(_job(test=["a"]), registry) == data_key(_job(test=["b"]), registry) == '["a"]'
    assert data_key(_job(test=["c"]), registry) == '["c"]'


def test_datasets_built_together_share_a_batch_given_the_registry():
    """A BO sample and its random control are drawn in one pass (``DatasetSpec.built_with``): their jobs go to
    one worker, which builds both pools once, instead of two workers each reading and ranking the corpus."""
    from metabench.plugins import load

    registry = load()
    assert registry.resolve("dataset", "boisson_vua18_bo").built_with == ("boisson_vua18_rs",)
    assert registry.resolve("dataset", "boisson_vua18_rs").built_with == ("boisson_vua18_bo",)
    assert registry.resolve("dataset", "boisson_m4x_es_bo").built_with == ()  # no control of its own
    jobs = [_job(test=["boisson_vua18_bo"]), _job(test=["boisson_m4x_es_bo"]), _job(test=["boisson_vua18_rs"]),
            _job(test=["no_such_dataset"])]
    assert data_key(jobs[0], registry) == data_key(jobs[2], registry) != data_key(jobs[1], registry)
    assert data_key(jobs[0]) != data_key(jobs[2])  # without the registry: by name, as before
    assert data_key(jobs[3], registry) == '["no_such_dataset"]'  # its job fails on the worker, with its message
    assert sorted(map(sorted, batches(jobs, [0, 1, 2, 3], 1, registry))) == [[0, 2], [1], [3]]
