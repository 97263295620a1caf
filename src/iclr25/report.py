"""Write a reproduction report: ``REPORT.md``, ``results.json`` and PNG figures."""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from iclr25.claims import Result

_PACKAGES = ("iclr25", "torch", "numpy", "scipy", "scikit-learn", "networkx", "pot")


def environment(seed: int, scale: str) -> dict[str, Any]:
    """Versions, device and run settings, recorded with every report."""
    import torch

    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "device": "cuda" if torch.cuda.is_available() else "cpu",
        "torch_threads": torch.get_num_threads(),
        "seed": seed,
        "scale": scale,
        "packages": versions,
    }


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}"


def _verdict(r: Result) -> str:
    return {"holds": "yes", "fails": "**no**", "error": "**error**"}[r.status]


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def margin(r: Result) -> float:
    """How far past its threshold a claim's figure lies, relative to |threshold| (> 0: holds)."""
    sign = 1.0 if r.direction == ">=" else -1.0
    scale = abs(r.threshold) if r.threshold != 0 else 1.0
    return sign * (r.measured - r.threshold) / scale


def summary_figure(results: list[Result], path: Path) -> Path | None:
    """Bar chart of each claim's relative margin past its threshold."""
    ran = [r for r in results if r.measured is not None]
    if not ran:
        return None
    # a bare Figure renders without pyplot, so the caller's backend is left alone
    from matplotlib.figure import Figure

    colors = ["tab:green" if r.holds else "tab:red" for r in ran]
    fig = Figure(figsize=(7, 0.35 * len(ran) + 1.2))
    ax = fig.subplots()
    ax.barh([r.claim_id for r in ran], [margin(r) for r in ran], color=colors)
    ax.axvline(0.0, color="k", lw=1)
    ax.set_xlabel("(measured - threshold) / |threshold|, signed by direction (green: holds)")
    ax.invert_yaxis()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def write_report(results: list[Result], out: Path, env: dict[str, Any]) -> Path:
    """Write ``out/REPORT.md``, ``results.json`` and ``summary.png``; return the report path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(
        json.dumps({"environment": env, "results": [r.to_dict() for r in results]}, indent=2)
    )
    summary = summary_figure(results, out / "summary.png")

    n_hold = sum(r.status == "holds" for r in results)
    n_err = sum(r.status == "error" for r in results)
    lines = [
        "# iclr25 reproduction report",
        "",
        f"{len(results)} claims at scale `{env['scale']}`, seed {env['seed']}: "
        f"{n_hold} hold, {len(results) - n_hold - n_err} do not hold, {n_err} errored.",
        "",
        "| claim | paper | claim sentence | metric | paper figure | measured | threshold "
        "| holds | seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| `{r.claim_id}` | {_cell(r.paper)} | {_cell(r.sentence)} | {_cell(r.metric)} "
            f"| {_cell(r.paper_figure)} | {_fmt(r.measured)} | {r.direction} {_fmt(r.threshold)} "
            f"| {_verdict(r)} | {r.seconds:.1f} |"
        )
    if summary is not None:
        lines += ["", f"![summary]({summary.name})"]
    for r in results:
        lines += ["", f"## `{r.claim_id}`", "", f"*{r.paper}*", "", r.sentence, ""]
        lines.append(
            f"- {r.metric}: measured {_fmt(r.measured)}, threshold {r.direction} "
            f"{_fmt(r.threshold)}, paper {r.paper_figure}: {_verdict(r)}"
        )
        for key, value in r.details.items():
            lines.append(f"- {key}: {json.dumps(value, default=str)}")
        for fig in r.figures:
            rel = os.path.relpath(fig, out)
            lines += ["", f"![{Path(fig).stem}]({rel})"]
        if r.error:
            lines += ["", "```", r.error.rstrip(), "```"]
    lines += ["", "## Environment", "", "```json", json.dumps(env, indent=2), "```", ""]
    path = out / "REPORT.md"
    path.write_text("\n".join(lines))
    return path


def read_results(path: Path) -> list[Result]:
    """Read the results back from a ``results.json``."""
    data = json.loads(Path(path).read_text())
    return [Result.from_dict(d) for d in data["results"]]
