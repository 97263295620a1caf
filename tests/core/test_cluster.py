"""The reproduction on a local Ray instance: same values as a local run, faults kept local."""

import importlib
import sys

import pytest
from typer.testing import CliRunner

from iclr25 import claims
from iclr25._cluster import parse_cluster
from iclr25.claims import Scale
from iclr25.cli import app
from iclr25.runner import run

runner = CliRunner()

_MODULE = '''
import os, signal
from dataclasses import dataclass
import torch
from iclr25.claims import Evidence, Setting, claim, experiment, scalar


@dataclass(frozen=True)
class R(Setting):
    budget_fields = ("n",)
    n: int


@dataclass
class RE(Evidence):
    value: float = scalar("u")


@experiment(quick=R(3), full=R(4))
def draws(setting, ctx):
    g = torch.Generator().manual_seed(ctx.seed)
    fig = ctx.figure("bars")
    fig.subplots().bar([0, 1], [1, 2])
    return RE(value=float(torch.rand(setting.n, generator=g).sum()))


@experiment(quick=R(1), full=R(2))
def steps(setting, ctx):
    return RE(value=float(setting.n * torch.get_num_threads()))


@experiment(quick=R(1), full=R(2))
def dies(setting, ctx):
    os.kill(os.getpid(), signal.SIGKILL)


def job(seed, k):
    g = torch.Generator().manual_seed(seed + k)
    return float(torch.rand((), generator=g)) + 10 * torch.get_num_threads(), os.getppid()


@experiment(quick=R(1), full=R(3))
def mapped(setting, ctx):  # ctx.map_jobs: forked workers, or Ray tasks on a Ray worker
    from iclr25._cluster import in_ray_worker

    out = ctx.map_jobs(job, [(ctx.seed, k) for k in range(setting.n)])
    assert ctx.quick or all((parent == os.getpid()) != in_ray_worker() for _, parent in out)
    return RE(value=sum(v for v, _ in out))


for name, exp in (("draws", draws), ("steps", steps), ("dies", dies), ("mapped", mapped)):
    claim(f"raytoy.{name}", experiment=exp, sentence="S", metric="m", unit="u",
          paper_figure="-", threshold=0.0)(lambda ev: ev.value)
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    (tmp_path / "raytoy.py").write_text(_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("raytoy")
    yield [claims._CLAIMS[f"raytoy.{n}"] for n in ("draws", "steps", "dies", "mapped")]
    sys.modules.pop("raytoy", None)
    claims.unregister("raytoy")


def test_a_local_ray_run_equals_jobs_1_and_a_killed_task_errors_alone(toy, tmp_path):
    """Its map_jobs too: the jobs as Ray tasks give what forked workers give."""
    pytest.importorskip("ray")
    from iclr25._cluster import ray_session

    with ray_session(None) as ray:
        records, results = run(toy[:3], Scale.quick, 7, tmp_path / "ray", threads=1,
                                      budget=2, cluster=ray)
        _, (mapped,) = run(toy[3:], Scale.full, 7, tmp_path / "ray", threads=2,
                                  cluster=ray)
    _, alone = run(toy[:2], Scale.quick, 7, tmp_path / "local", threads=1, budget=2)
    _, (forked,) = run(toy[3:], Scale.full, 7, tmp_path / "local", threads=2)
    assert mapped.status == "holds", mapped.error
    assert mapped.measured == forked.measured
    assert 30 < mapped.measured < 33  # three jobs, each on one thread
    assert [r.measured for r in results[:2]] == [r.measured for r in alone]
    assert results[1].measured == 2.0  # n = 1 x budget 2, on the one thread asked for
    assert results[2].status == "error" and "Ray task failed" in records[2].error
    assert records[0].figures and all(
        p.startswith(str(tmp_path / "ray")) and open(p, "rb").read(4) == b"\x89PNG"
        for p in records[0].figures)


def test_map_jobs_gives_the_same_values_under_jobs_2_and_alone(toy, tmp_path):
    mapped = toy[3:]  # three jobs, each in a forked worker of one thread
    _, (both,) = run(mapped, Scale.full, 7, tmp_path, jobs=2, threads=2)
    _, (alone,) = run(mapped, Scale.full, 7, tmp_path, threads=2)
    assert both.status == alone.status == "holds", (both.error, alone.error)
    assert both.measured == alone.measured and 30 < both.measured < 33
    # quick scale (a smoke test): its one job runs in the experiment, on its two threads
    _, (quick,) = run(mapped, Scale.quick, 7, tmp_path, threads=2)
    assert 20 < quick.measured < 21


@pytest.mark.parametrize("text", ["ray:/x", "spark", "ray://host", "ray://host:0",
                                  "ray://:10001", "ray://h:1/x"])
def test_a_malformed_address_is_refused(text):
    with pytest.raises(ValueError, match="--cluster must be"):
        parse_cluster(text)


def test_addresses():
    assert parse_cluster("ray") is None
    assert parse_cluster("ray://10.0.0.5:10001") == "ray://10.0.0.5:10001"


@pytest.mark.parametrize(("args", "words"), [
    (["--cluster", "spark"], "--cluster must be"),
    (["--cluster", "ray", "--jobs", "2"], "--cluster and --jobs"),
    (["--cluster", "ray://127.0.0.1:1"], "cannot reach ray://127.0.0.1:1"),
])
def test_cli_refuses_bad_cluster_use_in_one_line(toy, tmp_path, monkeypatch, args, words):
    pytest.importorskip("ray")
    monkeypatch.setattr(claims, "discover", lambda: {c.id: c for c in toy})
    for verb in ("reproduce", "ladder"):
        out = runner.invoke(app, [verb, "raytoy", *args, "--out", str(tmp_path / verb)])
        assert out.exit_code == 2, out.output
        lines = out.output.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], out.output


def test_a_lost_connection_keeps_what_finished_and_marks_the_rest_lost(toy, tmp_path):
    pytest.importorskip("ray")
    from iclr25.runner import LOST, Ray, RunSpec, Task, run_tasks

    class FakeRay:
        """Runs the first task here, then loses the cluster."""

        def __init__(self):
            self.calls = 0

        def remote(self, fn):
            class Ref:
                def __init__(self, msg):
                    self.msg = msg

            class Remote:
                def options(self, **kw):
                    return self

                def remote(self, msg):
                    return Ref(msg)
            self.fn = fn
            return Remote()

        def wait(self, refs, num_returns):
            self.calls += 1
            if self.calls > 1:
                raise ConnectionError("gone")
            return [refs[0]], refs[1:]

        def get(self, ref):
            return self.fn(ref.msg)

    spec = RunSpec(Scale.quick, "cpu", 1)
    tasks = [Task(c.experiment, (c,), 1, tmp_path, spec) for c in toy[:2]]
    seen = []
    done = run_tasks(tasks, Ray(FakeRay()), on_done=seen.append)
    assert [o.lost for o in done] == [False, True] and len(seen) == 2
    assert done[0].results[0].status == "holds"
    assert done[1].results[0].status == "error" and LOST in done[1].results[0].error
    assert LOST in done[1].record.error


def test_the_cli_ends_a_lost_run_with_one_line_after_the_report(toy, tmp_path, monkeypatch):
    """The lost flag of an outcome, not its error text, ends the run (exit 1)."""
    from iclr25 import runner as runner_module

    def lose(selected, scale, seed, figure_dir, device="cpu", on_experiment=None, *,
             on_done=None, **kw):
        spec = runner_module.RunSpec(scale, device, 1)
        tasks = [runner_module.Task(c.experiment, (c,), seed, figure_dir, spec)
                 for c in selected]
        outcomes = [runner_module._failed(t, "an engine's own words", lost=True)
                    for t in tasks]
        for t, o in zip(tasks, outcomes, strict=True):
            on_experiment(t.exp)
            on_done(o)
        return [o.record for o in outcomes], [r for o in outcomes for r in o.results]

    monkeypatch.setattr(claims, "discover", lambda: {c.id: c for c in toy[:1]})
    monkeypatch.setattr(runner_module, "run", lose)
    out = runner.invoke(app, ["reproduce", "raytoy", "--out", str(tmp_path)])
    assert out.exit_code == 1, out.output
    assert out.output.strip().splitlines()[-1].startswith("error: the connection")
    assert (tmp_path / "REPORT.md").exists()
