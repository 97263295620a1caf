"""The runner's pieces: the run spec, the engines and the module graph (issue 67)."""

import ast
from pathlib import Path

import pytest

import iclr25
from iclr25 import runner
from iclr25.claims import Scale
from iclr25.runner import Inline, Pool, Ray, RunSpec, engine_for

SRC = Path(iclr25.__file__).parent


def test_a_run_spec_is_checked_and_normalised():
    s = RunSpec("quick", "cpu", 2, 3)
    assert (s.scale, s.device, s.threads, s.budget, s.draws) == (Scale.quick, "cpu", 2, 3.0, 1)
    with pytest.raises(ValueError, match="threads must be an integer >= 1, got 0"):
        RunSpec(Scale.full, threads=0)
    with pytest.raises(ValueError, match="threads"):
        RunSpec(Scale.full, threads=True)
    with pytest.raises(ValueError, match="budget must be a positive number"):
        RunSpec(Scale.full, budget=-1)
    with pytest.raises(ValueError, match="draws must be 1"):
        RunSpec(Scale.full, draws=2)
    with pytest.raises(ValueError):
        RunSpec("huge")
    with pytest.raises(AttributeError):
        s.threads = 3  # frozen: a task's spec cannot move under it


def test_the_engine_follows_jobs_and_cluster():
    assert isinstance(engine_for(), Inline) and not Inline.concurrent
    pool = engine_for(3)
    assert isinstance(pool, Pool) and pool.jobs == 3 and Pool.concurrent
    cluster = object()
    ray = engine_for(1, cluster)
    assert isinstance(ray, Ray) and ray.ray is cluster and Ray.concurrent
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="jobs must be an integer >= 1"):
            engine_for(bad)


def _imports(path):
    """The iclr25 modules ``path`` imports when it runs (``if TYPE_CHECKING:`` aside)."""
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and getattr(node.test, "id", None) == "TYPE_CHECKING"
                   for n in ast.walk(node)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("iclr25")}


def test_the_modules_of_a_run_import_one_way():
    # declarations <- verdicts <- runner <- report/ladder/cli; the Ray session module imports
    # no other part of iclr25, so neither it nor the runner can close a cycle
    graph = {name: _imports(SRC / f"{name}.py")
             for name in ("claims", "verdicts", "runner", "_cluster", "_format")}
    assert not graph["_cluster"] and not graph["_format"]
    assert not {m for m in graph["claims"] if m.split(".")[1:2] in (["verdicts"], ["runner"])}
    assert not any("runner" in m or "_cluster" in m for m in graph["verdicts"])
    assert not any("_cluster" in m for m in graph["runner"])


def test_the_fork_server_preloads_the_runner():
    text = (SRC / "_forkserver.py").read_text()
    assert '"iclr25.runner"' in text
    assert callable(runner._serve)
