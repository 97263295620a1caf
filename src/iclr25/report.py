"""Write a reproduction report: ``REPORT.md``, ``results.json`` and PNG figures.

``results.json`` keeps every number at full precision (it is the record runs are compared
with); ``REPORT.md`` is for reading: one short table of claims, then a section per method
with its paper, each experiment's setting and evidence as tables rounded to 4 significant
figures, and each figure once. ``iclr25 report results.json`` re-renders it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import re
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from iclr25 import verdicts
from iclr25._format import cell, md_table, num, sign, with_unit
from iclr25.claims import Paper
from iclr25.runner import ExperimentRecord
from iclr25.verdicts import ClaimResult, brief, strongest_competitor, why

__all__ = ["environment", "method_lines", "previous_seconds", "read_results", "summary_figure",
           "summary_table", "write_report"]

_CORE = ("torch", "numpy", "scipy", "scikit-learn", "networkx", "safetensors", "typer", "rich",
         "matplotlib")


def _extra_packages() -> list[str]:
    """Distribution names in iclr25's field extras, from its metadata (no method named here)."""
    try:
        reqs = metadata.requires("iclr25") or []
    except metadata.PackageNotFoundError:
        return []
    names = []
    for req in reqs:
        if "extra ==" not in req or "iclr25" in req.split(";")[0] or 'extra == "test"' in req:
            continue
        name = re.split(r"[ ;<>=!~\[]", req, maxsplit=1)[0]
        if name not in names and name not in _CORE:
            names.append(name)
    return names


def environment(seed: int, scale: str, device: str = "cpu", **run: Any) -> dict[str, Any]:
    """Versions, machine and run settings, recorded with every report.

    ``run`` adds run facts (jobs, threads per experiment, wall and summed experiment seconds).
    """
    import torch

    versions = {}
    for name in ("iclr25", *_CORE, *_extra_packages()):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        # PyTorch (and BLAS) pick CPU kernels by the CPU (AVX2, AVX-512...): float sums, and
        # the training runs they feed, differ in their last places between machines
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpus": os.cpu_count(),
        "device": device,
        "cuda_available": torch.cuda.is_available(),
        "torch_threads": torch.get_num_threads(),
        "seed": seed,
        "scale": scale,
        **run,
        "packages": versions,
    }


_SMOKE = ("Quick scale is a smoke test: it checks that each pipeline runs end to end on tiny "
          "budgets, not whether the paper's claim holds; verdicts are marked `smoke:`. Run "
          "`iclr25 reproduce --scale full` for the evidence.")


# --- the summary chart -------------------------------------------------------------------------

def _panel(ax: Any, r: ClaimResult) -> None:
    """One claim's panel: the threshold, the holding side shaded, the figure coloured by its
    verdict, each draw with the mean ± one SE, the trivial arm, both arms in the title."""
    draws = [v for v in r.draws if v is not None and math.isfinite(v)]
    trivial = [t for t in (r.trivial_value,) if t is not None and math.isfinite(t)]
    lo, hi = min(r.measured, r.threshold, *draws, *trivial), max(
        r.measured, r.threshold, *draws, *trivial)
    pad = 0.25 * (hi - lo) or 0.25 * max(abs(r.threshold), 1e-3)
    left, right = lo - pad, hi + pad
    ax.set_xlim(left, right)
    ax.axvspan(*((r.threshold, right) if r.direction == ">=" else (left, r.threshold)),
               color="tab:green", alpha=0.12)
    ax.axvline(r.threshold, color="k", lw=1)
    colour = verdicts.verdict(r.status).colour
    if len(draws) > 1:  # the draw spread: each draw, and the mean ± one SE
        ax.plot(draws, [0.25] * len(draws), "|", color=colour, ms=9)
        ax.errorbar([r.measured], [0], xerr=[r.se or 0.0], color=colour, capsize=3)
    ax.plot([r.measured], [0], "o", color=colour, ms=8)
    if trivial:
        ax.plot(trivial, [-0.25], "x", color="k", ms=7)
    ax.set_ylim(-0.6, 0.6)
    ax.set_yticks([])
    base = "" if r.ours is None else (
        f"  (ours {num(r.ours, 3)} vs baseline {num(r.baseline_value, 3)})")
    ax.set_title(r.claim_id + base, fontsize=8, loc="left")
    ax.set_xlabel(r.unit or r.metric, fontsize=7)
    ax.tick_params(labelsize=7)


def summary_figure(results: list[ClaimResult], path: Path) -> Path | None:
    """One small panel per claim: the measured value against its threshold, in the claim's unit.

    The side of the threshold where a claim holds is shaded; the dot's colour is the verdict
    (the legend says which). Each panel has its own axis, so claims with small thresholds do
    not look inflated.
    """
    ran = [r for r in results if r.measured is not None and math.isfinite(r.measured)]
    if not ran:
        return None
    from matplotlib.figure import Figure  # a bare Figure: the caller's backend is left alone

    cols = 3
    rows = math.ceil(len(ran) / cols)
    # margins fixed in inches (the fonts are fixed): tight layouts would draw the figure twice more
    width, height, top, bottom, gap, side = 4.2 * cols, 1.05 * rows + 0.5, 0.8, 0.4, 0.55, 0.3
    ax_h = (height - top - bottom - gap * (rows - 1)) / rows
    ax_w = (width - 2 * side - side * (cols - 1)) / cols
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=side / width, right=1 - side / width, bottom=bottom / height,
                        top=1 - top / height, hspace=gap / ax_h, wspace=side / ax_w)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, r in zip(axes.flat, ran, strict=False):
        _panel(ax, r)
    for ax in list(axes.flat)[len(ran):]:
        ax.set_visible(False)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    shown = [v for v in verdicts.VERDICTS if any(r.status == v.name for r in ran)]
    handles = [Line2D([], [], ls="", marker="o", color=v.colour, label=v.name) for v in shown]
    handles += [Line2D([], [], ls="", marker="|", color="k", label="each draw (± SE bar)"),
                Line2D([], [], ls="", marker="x", color="k", label="trivial arm"),
                Line2D([], [], color="k", lw=1, label="threshold"),
                Patch(color="tab:green", alpha=0.12, label="side where the claim holds")]
    fig.legend(handles=handles, loc="upper center", ncol=min(len(handles), 5), fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, 1 - 0.05 / height))
    fig.savefig(path, dpi=100)
    return path


# --- writing -------------------------------------------------------------------------------------

def _paper_lines(p: dict[str, Any] | None, method: str) -> list[str]:
    if p is None:
        return [f"## `iclr25.{method}`", ""]
    links = []
    if p.get("arxiv"):
        links.append(f"[arXiv {p['arxiv']}](https://arxiv.org/abs/{p['arxiv']})")
    if p.get("openreview"):
        links.append(f"[OpenReview](https://openreview.net/forum?id={p['openreview']})")
    if p.get("code"):
        links.append(f"[official code](https://github.com/{p['code']})")
    return [f"## {p['number']}. {p['title']} (`iclr25.{method}`)", "",
            f"{p['authors']}. {p['venue']}. " + " · ".join(links), ""]


def _per_draw_lines(recs: list[ExperimentRecord]) -> list[str]:
    """The scalars of every draw side by side (their tables are draw 0's, in the next lines)."""
    names = [n for n, _, _ in recs[0].scalars]
    by = [{n: v for n, v, _ in r.scalars} for r in recs]
    units = {n: u for n, _, u in recs[0].scalars}
    head = ["quantity", *(f"draw {r.draw} (seed {r.seed})" for r in recs), "unit"]
    return [f"Per draw ({len(recs)} draws; the tables and figures below are draw 0's):", "",
            *md_table(head, [[n, *(b.get(n) for b in by), units[n]] for n in names]), ""]


def _experiment_lines(recs: list[ExperimentRecord], depth: int = 3) -> list[str]:
    """An experiment's section: its setting and, for each draw, its evidence."""
    rec = recs[0]
    threads = f", {rec.threads} thread{'s' * (rec.threads != 1)}" if rec.threads else ""
    secs = sum(r.seconds for r in recs)
    draws = f", {len(recs)} draws" if len(recs) > 1 else ""
    lines = [f"{'#' * depth} Experiment `{rec.id}` ({secs:.1f} s, {rec.device}{threads}{draws})",
             ""]
    if rec.deviations:
        lines += ["Deviations from the paper's experiment:", ""]
        lines += [f"- {cell(d)}" for d in rec.deviations]
        lines.append("")
    if rec.setting:
        lines += ["Setting:", ""]
        lines += md_table(["parameter", "value"], [[k, v] for k, v in rec.setting.items()]
                        + [["budget (× the budget fields)", rec.budget]])
        lines.append("")
    if len(recs) > 1 and rec.scalars:
        lines += _per_draw_lines(recs)
    elif rec.scalars:
        lines += md_table(["quantity", "value", "unit"],
                        [[n, v, u] for n, v, u in rec.scalars])
        lines.append("")
    for t in rec.tables:
        lines += [f"*{cell(t['title'])}*", ""]
        lines += md_table(t["columns"], t["rows"])
        lines.append("")
    for fig in rec.figures:
        lines += [f"![{Path(fig).stem}]({Path(fig).as_posix()})", ""]
    for r in recs:
        if r.error:
            lines += [f"Draw {r.draw} (seed {r.seed}) raised:" if len(recs) > 1 else
                      "The experiment raised:", "", "```", r.error.rstrip(), "```", ""]
    return lines


def _verdict(r: ClaimResult, quick: bool) -> str:
    label = verdicts.verdict(r.status).label
    return f"smoke: {label}" if quick else label


def _versus(r: ClaimResult) -> str:
    """'ours 0.91 vs IG+M 0.85' where both arms are known, the baseline's name otherwise."""
    if r.baseline is None:
        return "-"
    if r.ours is None or r.baseline_value is None:
        return f"vs {cell(r.baseline)}"
    return f"ours {cell(r.ours)} vs {cell(r.baseline)} {cell(r.baseline_value)}"


def _claim_lines(r: ClaimResult, quick: bool, trend: str | None = None) -> list[str]:
    lines = [f"- **`{r.claim_id}`** {r.sentence}",
             f"  {r.metric}: measured {with_unit(r.measured, r.unit)}, threshold "
             f"{sign(r.direction)} {with_unit(r.threshold, r.unit)} "
             f"({_verdict(r, quick).replace('*', '')}); paper: {r.paper_figure}."]
    if len(r.draws) > 1:
        lines.append(f"  Per draw: {', '.join(cell(v) for v in r.draws)} (mean "
                     f"{cell(r.measured)} ± {cell(r.se)} SE)" + (
                         f"; ours {', '.join(cell(v) for v in r.ours_draws)}, baseline "
                         f"{', '.join(cell(v) for v in r.baseline_draws)}."
                         if r.ours is not None else "."))
    if r.baseline is not None:
        lines.append(f"  Baseline: {cell(r.baseline)}" + (
            f"; ours {cell(r.ours)}, baseline {cell(r.baseline_value)}."
            if r.ours is not None else "."))
    strong = strongest_competitor(r)
    if strong is not None:
        lines.append(f"  Strongest competitor: {cell(strong[0])} {cell(strong[1])} "
                     f"(ours {cell(r.ours if r.ours is not None else r.measured)}).")
    if r.trivial_doc is not None:
        lines.append(f"  Trivial arm ({r.trivial_doc.rstrip('.')}): "
                     f"{with_unit(r.trivial_value, r.unit)}.")
    if r.control_doc is not None:
        read = ", ".join(f"{k} = {cell(v)}" for k, v in r.control_read.items())
        state = {True: "passed", False: "**failed**", None: "not evaluated"}[r.control_ok]
        doc = r.control_doc.rstrip()
        doc += "" if doc.endswith((".", "!", "?")) else "."
        # a failed control's reading is the why's, printed there once
        lines.append(f"  Control ({state}): {doc}" + (
            f" Read: {read}." if read and r.control_ok is not False else ""))
    reason = why(r, trend)
    if reason is not None:
        lines.append(f"  Why: {reason}")
    elif trend is not None:  # a hold has no why; its trend says whether more budget keeps it
        lines.append(f"  Ladder: {trend}.")
    if r.error and not r.error.startswith("experiment "):
        lines += ["", "  ```", *("  " + ln for ln in r.error.rstrip().splitlines()), "  ```"]
    return lines


def summary_table(experiments: list[ExperimentRecord], results: list[ClaimResult],
                  quick: bool, trends: dict[str, str] | None = None) -> list[str]:
    """The report's table of claims: one row each with its cause in a few words (joined by
    its ladder trend from ``trends``), an experiment's seconds (over its draws) on its first
    claim."""
    trends = trends or {}
    lines = ["| claim | measured | vs | threshold | verdict | why | seconds |",
             "|---|---|---|---|---|---|---|"]
    seconds: dict[str, float] = {}
    for e in experiments:
        seconds[e.id] = seconds.get(e.id, 0.0) + e.seconds
    shown: set[str] = set()
    for r in results:
        secs = "shared" if r.experiment in shown else f"{seconds.get(r.experiment, 0.0):.1f}"
        shown.add(r.experiment)
        lines.append(f"| `{r.claim_id}` | {with_unit(r.measured, r.unit)} | {_versus(r)} | "
                     f"{sign(r.direction)} {with_unit(r.threshold, r.unit)} | "
                     f"{_verdict(r, quick)} | {cell(brief(r, trends.get(r.claim_id)))} | "
                     f"{secs} |")
    return lines


def method_lines(method: str, experiments: list[ExperimentRecord], results: list[ClaimResult],
                 quick: bool, trends: dict[str, str] | None = None, depth: int = 3) -> list[str]:
    """One method's section of the report, below its paper line: its claims (each with its
    why, joined by its ladder trend from ``trends``), then its experiments under headings of
    level ``depth`` (the report's 3; a page that nests it deeper passes more).
    """
    trends = trends or {}
    rs = [r for r in results if r.method == method]
    lines = ["Claims:", ""]
    for r in rs:
        lines += _claim_lines(r, quick, trends.get(r.claim_id))
    lines.append("")
    for eid in dict.fromkeys(r.experiment for r in rs):
        recs = sorted((e for e in experiments if e.id == eid), key=lambda e: e.draw)
        if recs:
            lines += _experiment_lines(recs, depth)
    return lines


def _summary_lines(env: dict[str, Any], experiments: list[ExperimentRecord],
                   results: list[ClaimResult], out: Path, trends: dict[str, str],
                   ) -> list[str]:
    """The report's head: the run in one sentence, the smoke note and the table of claims."""
    quick = env.get("scale") == "quick"
    timing = ""
    if env.get("wall_seconds") is not None:
        timing = (f" Wall time {env['wall_seconds']:.0f} s with {env.get('jobs', 1)} job(s) of "
                  f"{env.get('threads', '?')} thread(s); experiments' own times sum to "
                  f"{env.get('experiment_seconds', 0.0):.0f} s.")
    lines = [
        "# iclr25 reproduction report", "",
        f"{len(results)} claims at scale `{env['scale']}`, seed {env['seed']}, device "
        f"{env['device']}, training budget ×{env.get('budget', 1.0):g}, "
        f"{env.get('draws', 1)} draw(s) per experiment: "
        f"{verdicts.count_line([r.status for r in results])}. Seconds are each "
        "experiment's own time, shown on the first claim that reads it." + timing, "",
    ]
    if quick:
        lines += [f"> {_SMOKE}", ""]
    lines += summary_table(experiments, results, quick, trends)
    if (out / "summary.png").exists():
        lines += ["", "![measured against threshold](summary.png)"]
    return lines


def render(env: dict[str, Any], experiments: list[ExperimentRecord],
           results: list[ClaimResult], papers: dict[str, dict[str, Any]], out: Path,
           trends: dict[str, str] | None = None) -> str:
    """The text of REPORT.md; ``trends`` (claim id -> ladder trend) join each claim's why."""
    out = Path(out)
    trends = trends or {}
    quick = env.get("scale") == "quick"
    lines = _summary_lines(env, experiments, results, out, trends)
    for method in dict.fromkeys(r.method for r in results):
        lines += ["", *_paper_lines(papers.get(method), method),
                  *method_lines(method, experiments, results, quick, trends)]

    lines += ["## Environment", ""]
    lines += md_table(["", ""], [[k, v] for k, v in env.items() if k != "packages"])
    lines += ["", "Installed versions (`-`: not installed):", ""]
    lines += md_table(["package", "version"], [[k, v] for k, v in env["packages"].items()])
    return "\n".join(lines) + "\n"


def write_report(experiments: list[ExperimentRecord], results: list[ClaimResult], out: Path,
                 env: dict[str, Any], papers: dict[str, Paper | dict[str, Any]] | None = None,
                 trends: dict[str, str] | None = None) -> Path:
    """Write ``out/results.json``, ``out/summary.png`` and ``out/REPORT.md``; return its path.

    ``trends`` (claim id -> trend, from :func:`iclr25.ladder.read_ladder`) join the whys.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paper_dicts = {m: dataclasses.asdict(p) if isinstance(p, Paper) else dict(p)
                   for m, p in (papers or {}).items()}
    exp_dicts = []
    for e in experiments:
        d = e.to_dict()
        d["figures"] = [os.path.relpath(Path(f).resolve(), out.resolve()) for f in e.figures]
        exp_dicts.append(d)
    (out / "results.json").write_text(json.dumps(
        {"environment": env, "papers": paper_dicts, "experiments": exp_dicts,
         "claims": [r.to_dict() for r in results]}, indent=2, allow_nan=True))
    summary = out / "summary.png"
    summary.unlink(missing_ok=True)
    summary_figure(results, summary)
    path = out / "REPORT.md"
    path.write_text(render(env, [ExperimentRecord.from_dict(d) for d in exp_dicts], results,
                           paper_dicts, out, trends))
    return path


def read_results(path: Path) -> tuple[dict[str, Any], list[ExperimentRecord],
                                      list[ClaimResult], dict[str, dict[str, Any]]]:
    """Read ``(environment, experiments, claims, papers)`` back from a ``results.json``.

    Raises:
        ValueError: the file is not JSON or not a results file written by :func:`write_report`.
    """
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or not {"environment", "experiments", "claims"} <= set(data):
        raise ValueError(f"{path} is not an iclr25 results.json (needs environment, "
                         f"experiments and claims)")
    return (data["environment"], [ExperimentRecord.from_dict(d) for d in data["experiments"]],
            [ClaimResult.from_dict(d) for d in data["claims"]], data.get("papers", {}))


def previous_seconds(path: Path, scale: str) -> dict[str, float]:
    """``{experiment id: seconds per unit budget}`` from an earlier results.json at ``scale``.

    The runner starts the longest first from these; a missing or unreadable file gives ``{}``
    (the declared costs are used then).
    """
    try:
        _, records, _, _ = read_results(path)
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {r.id: r.seconds / r.budget for r in records
            if r.scale == scale and math.isfinite(r.seconds) and r.error is None}
