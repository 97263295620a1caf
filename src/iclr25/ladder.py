"""Budget ladders: would more compute close the gap?

``iclr25 ladder NAMES --budgets 0.5,1,2,4`` runs each selected experiment once per training
budget (:meth:`iclr25.claims.Setting.scaled`) and, at the smallest budget, on ``spread_seeds``
seeds to measure how far a claim's figure moves by the seed alone. Each claim then gets one
trend by :func:`trend`, a rule fixed here and tested:

- ``holds throughout``: the figure meets the threshold at every budget;
- ``crosses at K=k``: it meets the threshold from budget ``k`` on, and not below;
- ``approaching`` / ``receding``: the least-squares line of the shortfall against log budget
  moves toward / away from the threshold, over the ladder, by more than the seed spread;
- ``flat``: it moves by no more than the seed spread.

``ladder.json`` keeps every run's claims and records at full precision; ``LADDER.md`` shows a
table per claim and one figure each: the claim's figure and each arm's value against the
budget (log axis), the threshold as a line.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iclr25 import verdicts
from iclr25._format import md_table, num, sign
from iclr25.claims import Claim, Scale, check_budget
from iclr25.runner import RunSpec, Task, _grouped, default_threads, engine_for, run_tasks
from iclr25.verdicts import ClaimResult

__all__ = ["Rung", "ladder_tasks", "parse_budgets", "read_ladder", "run_ladder", "trend",
           "write_ladder"]


def parse_budgets(text: str) -> tuple[float, ...]:
    """``"0.5,1,2,4"`` as sorted budgets.

    Raises:
        ValueError: naming ``--budgets``: empty, an entry that is not a positive number, or a
            budget given twice.
    """
    parts = [p.strip() for p in str(text).split(",")]
    if not text or not all(parts):
        raise ValueError(f"--budgets must be a comma-separated list of positive numbers, "
                         f"got {text!r}")
    out = []
    for p in parts:
        try:
            out.append(check_budget(float(p), "--budgets"))
        except ValueError:
            raise ValueError(f"--budgets entries must be positive numbers, got {p!r}") from None
    if len(set(out)) != len(out):
        raise ValueError(f"--budgets lists a budget twice: {text!r}")
    return tuple(sorted(out))


def trend(budgets: Sequence[float], values: Sequence[float | None], threshold: float,
          direction: str, spread: float) -> str:
    """The ladder's verdict on one claim: see the module docstring for the rule.

    ``values[i]`` is the claim's figure at ``budgets[i]`` (None or NaN: the run gave none);
    ``spread`` is how far the figure moved across seeds at one budget (>= 0).
    """
    pts = [(b, float(v)) for b, v in zip(budgets, values, strict=True)
           if v is not None and math.isfinite(v)]
    if len(pts) < 2:
        return f"no trend ({len(pts)} usable rung{'s' * (len(pts) != 1)})"
    pts.sort()

    def meets(v: float) -> bool:
        return v >= threshold if direction == ">=" else v <= threshold

    ok = [meets(v) for _, v in pts]
    if all(ok):
        return "holds throughout"
    if ok[-1]:
        first = max(i for i, m in enumerate(ok) if not m) + 1
        return f"crosses at K={pts[first][0]:g}"
    # shortfall: how far the figure is from the threshold, positive when short of it
    xs = [math.log2(b) for b, _ in pts]
    ys = [(threshold - v) if direction == ">=" else (v - threshold) for _, v in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
             / sum((x - mx) ** 2 for x in xs))
    moved = -slope * (xs[-1] - xs[0])  # > 0: toward the threshold
    if moved > spread:
        return "approaching"
    if moved < -spread:
        return "receding"
    return "flat"


@dataclass
class Rung:
    """One claim's figure and arms at one budget and seed."""

    budget: float
    seed: int
    result: ClaimResult


@dataclass
class LadderClaim:
    """A claim's ladder: its rungs, seed spread and trend."""

    claim_id: str
    threshold: float
    direction: str
    unit: str
    budgets: list[float]
    values: list[float | None]
    arms: dict[str, list[float | None]]
    spread: float
    spread_seeds: list[int]
    trend: str
    trains: bool = True
    rungs: list[dict[str, Any]] = field(default_factory=list)


def _arms(r: ClaimResult) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    if r.ours is not None:
        out["ours"] = r.ours
    if r.baseline is not None and r.baseline_value is not None:
        out[r.baseline] = r.baseline_value
    out.update(r.competitors)
    if r.trivial_value is not None:
        out[f"trivial ({r.trivial_doc})"] = r.trivial_value
    return out


def ladder_tasks(selected: Sequence[Claim], budgets: Sequence[float], seed: int, out: Path,
                 spread_seeds: int, spec: RunSpec) -> list[Task]:
    """The runs a ladder makes: each experiment at every budget, and on ``spread_seeds`` seeds
    at the smallest; an experiment whose Setting declares no budget fields runs once. Each
    runs as ``spec`` says, at its own budget."""
    budgets = tuple(sorted(check_budget(b, "--budgets") for b in budgets))
    if not isinstance(spread_seeds, int) or spread_seeds < 1:
        raise ValueError(f"spread_seeds must be an integer >= 1, got {spread_seeds!r}")
    tasks = []
    for exp, cs in _grouped(selected).values():
        trains = bool(type(exp.full).budget_fields)
        rungs = budgets if trains else (1.0,)  # a budget changes nothing: one run
        seeds_low = range(seed, seed + (spread_seeds if trains else 1))
        for b in rungs:
            for s in (seeds_low if b == rungs[0] else (seed,)):
                tasks.append(Task(exp, tuple(cs), s, Path(out) / "figures" / f"K{b:g}-s{s}",
                                  dataclasses.replace(spec, budget=b)))
    return tasks


def run_ladder(selected: Sequence[Claim], budgets: Sequence[float], scale: Scale, seed: int,
               out: Path, device: str = "cpu", *, jobs: int = 1, threads: int | None = None,
               spread_seeds: int = 2, on_experiment: Any = None, on_done: Any = None,
               cluster: Any = None) -> dict[str, Any]:
    """Run the :func:`ladder_tasks` of ``selected`` and return the ladder.

    The seed spread is measured at the smallest budget on seeds ``seed .. seed +
    spread_seeds - 1``. ``jobs`` and ``cluster`` pick the engine and ``threads`` each run's
    torch threads (see :func:`iclr25.runner.run`); ``on_done`` receives each
    :class:`iclr25.runner.Outcome`.
    """
    budgets = tuple(sorted(check_budget(b, "--budgets") for b in budgets))
    engine = engine_for(jobs, cluster)
    spec = RunSpec(scale, device, default_threads(jobs) if threads is None else threads)
    tasks = ladder_tasks(selected, budgets, seed, out, spread_seeds, spec)
    done = run_tasks(tasks, engine, on_experiment, on_done=on_done)
    rungs_by_claim: dict[str, list[Rung]] = {}
    records = []
    for t, outcome in zip(tasks, done, strict=True):
        records.append(outcome.record.to_dict())
        for r in outcome.results:
            rungs_by_claim.setdefault(r.claim_id, []).append(Rung(t.spec.budget, t.seed, r))
    claims_out = {c.id: _ladder_claim(c, rungs_by_claim[c.id], seed) for c in selected}
    return {"scale": Scale(scale).value, "seed": seed, "device": device,
            "budgets": list(budgets), "spread_seeds": spread_seeds,
            "claims": {k: v.__dict__ for k, v in claims_out.items()}, "records": records}


def _ladder_claim(c: Claim, rungs: list[Rung], seed: int) -> LadderClaim:
    trains = bool(type(c.experiment.full).budget_fields)
    main = sorted((r for r in rungs if r.seed == seed), key=lambda r: r.budget)
    budgets = [r.budget for r in main]
    values = [r.result.measured for r in main]
    low = [r.result.measured for r in rungs if r.budget == budgets[0]]
    low = [v for v in low if v is not None and math.isfinite(v)]
    spread = (max(low) - min(low)) if len(low) > 1 else 0.0
    names: list[str] = []
    for r in main:
        names += [n for n in _arms(r.result) if n not in names]
    arms = {n: [_arms(r.result).get(n) for r in main] for n in names}
    if trains:
        label = trend(budgets, values, c.threshold, c.direction, spread)
    else:
        label = "no budget (nothing in the experiment trains)"
    # the trend reads the figure alone: say where a verdict could not stand on it
    for v in verdicts.VERDICTS:
        at = [f"{r.budget:g}" for r in main if r.result.status == v.name]
        if at and not v.on_figure:
            label += f"; {v.name} at K={', '.join(at)}"
    return LadderClaim(c.id, c.threshold, c.direction, c.unit, budgets, values, arms, spread,
                       sorted({r.seed for r in rungs if r.budget == budgets[0]}), label, trains,
                       [{"budget": r.budget, "seed": r.seed, **r.result.to_dict()}
                        for r in rungs])


def _figure(name: str, lc: dict[str, Any], path: Path) -> None:
    from matplotlib.figure import Figure  # a bare Figure: the caller's backend is left alone

    fig = Figure(figsize=(9, 3.2))
    left, right = fig.subplots(1, 2)
    b = lc["budgets"]
    left.plot(b, [math.nan if v is None else v for v in lc["values"]], "o-", color="k",
              label="claim's figure")
    left.axhline(lc["threshold"], color="tab:red", ls="--",
                 label=f"threshold {sign(lc['direction'])} {num(lc['threshold'], 6)}")
    left.set_title(f"{name}: {lc['trend']}", fontsize=9, loc="left")
    left.set_ylabel(lc["unit"] or "figure")
    for arm, vals in lc["arms"].items():
        right.plot(b, [math.nan if v is None else v for v in vals], "o-", label=arm)
    right.set_title("arms", fontsize=9, loc="left")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(b, [f"{x:g}" for x in b])
        ax.set_xlabel("training budget K (× the setting's)")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def write_ladder(ladder: dict[str, Any], out: Path, env: dict[str, Any] | None = None) -> Path:
    """Write ``ladder.json``, one figure per claim and ``LADDER.md``; return LADDER.md's path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = {"kind": "iclr25-ladder", "environment": env or {}, **ladder}
    (out / "ladder.json").write_text(json.dumps(data, indent=2, allow_nan=True))
    lines = ["# iclr25 budget ladder", "",
             f"{len(ladder['claims'])} claims at scale `{ladder['scale']}`, seed "
             f"{ladder['seed']}, device {ladder['device']}, budgets "
             f"{', '.join(f'{b:g}' for b in ladder['budgets'])} (× each Setting's budget "
             f"fields); seed spread from {ladder['spread_seeds']} seed(s) at the smallest "
             f"budget.", ""]
    if env and env.get("wall_seconds") is not None:
        lines += [f"Wall time {env['wall_seconds']:.0f} s with {env.get('jobs', 1)} job(s) of "
                  f"{env.get('threads', '?')} thread(s).", ""]
    ks = [f"K={b:g}" for b in ladder["budgets"]]
    rows = []
    for cid, lc in ladder["claims"].items():
        by_b = dict(zip(lc["budgets"], lc["values"], strict=True))
        # an experiment that trains nothing ran once: its figure stands for every budget
        cells = [by_b.get(b) if lc["trains"] else lc["values"][0] for b in ladder["budgets"]]
        rows.append([f"`{cid}`", lc["trend"], *_rung(cells), _rung([lc["spread"]])[0],
                     f"{sign(lc['direction'])} {num(lc['threshold'], 6)}"])
    lines += md_table(["claim", "trend", *ks, "spread", "threshold"], rows)
    (out / "figures").mkdir(exist_ok=True)
    for cid, lc in ladder["claims"].items():
        _figure(cid, lc, out / "figures" / f"ladder.{cid}.png")
        lines += ["", f"## `{cid}`: {lc['trend']}", ""]
        lines += md_table(["arm", *(f"K={b:g}" for b in lc["budgets"])],
                          [["claim's figure", *_rung(lc["values"])],
                           *([arm, *_rung(vals)] for arm, vals in lc["arms"].items())])
        lines += ["", f"![{cid}](figures/ladder.{cid}.png)"]
    path = out / "LADDER.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def _rung(values: Sequence[Any]) -> list[Any]:
    """Figures of rungs for :func:`md_table`: a NaN (a rung that gave none) shown as ``-``."""
    return [None if isinstance(v, float) and math.isnan(v) else v for v in values]


def read_ladder(path: Path) -> dict[str, str]:
    """``{claim id: trend}`` from a ``ladder.json`` written by :func:`write_ladder`.

    Raises:
        ValueError: the file is not JSON or not a ladder.
    """
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a readable ladder.json: {exc}") from None
    if not (isinstance(data, dict) and data.get("kind") == "iclr25-ladder"
            and isinstance(data.get("claims"), dict)):
        raise ValueError(f"{path} is not a ladder.json written by `iclr25 ladder`")
    return {cid: str(lc["trend"]) for cid, lc in data["claims"].items()}
