"""The claim registry: each method registers the paper claims it reproduces.

A claim is declared once, with everything that must not depend on the run (the
sentence, the metric, the paper's figure and the pass threshold), and a function
that measures it::

    @claim(
        "mother.undirected_accuracy",
        paper="Unsupervised Model Tree Heritage Recovery",
        sentence="The distance MST recovers the undirected edges of each tree.",
        metric="undirected edge accuracy",
        paper_figure="~1.0 (VTHR FT split, Table 1)",
        threshold=0.95,
        direction=">=",
    )
    def undirected(ctx: Context) -> Measurement:
        ...
        return Measurement(value=acc, figures=[ctx.savefig(fig, "sweep")])

Because the threshold is fixed at declaration, a run cannot move it.
The CLI and the report only talk to this module.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import pkgutil
import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from iclr25._threads import torch_threads

__all__ = ["Claim", "Context", "Measurement", "Result", "Scale", "claim", "discover",
           "run", "select", "torch_threads"]

Direction = Literal[">=", "<="]


class Scale(str, enum.Enum):
    """How large a reproduction run is: ``quick`` (seconds, tests/CI) or ``full`` (minutes)."""

    quick = "quick"
    full = "full"


@dataclass
class Measurement:
    """What a claim function returns: the measured figure and its evidence.

    Attributes:
        value: the measured figure, compared with the claim's threshold.
        details: further figures worth reporting (per-seed values, baselines...),
            JSON-serialisable.
        figures: paths of PNG figures written through ``Context.savefig``.
    """

    value: float
    details: dict[str, Any] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)


@dataclass
class Context:
    """What a claim function is given: the scale, the seed and where figures go."""

    scale: Scale
    seed: int
    figure_dir: Path
    claim_id: str = ""

    @property
    def quick(self) -> bool:
        return self.scale == Scale.quick

    def savefig(self, fig: Any, name: str) -> str:
        """Save a matplotlib figure as ``<figure_dir>/<claim_id>.<name>.png``; return its path."""
        import matplotlib.pyplot as plt

        self.figure_dir.mkdir(parents=True, exist_ok=True)
        path = self.figure_dir / f"{self.claim_id}.{name}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        return str(path)


@dataclass(frozen=True)
class Claim:
    """A registered claim: its fixed description and the function that measures it."""

    id: str
    paper: str
    sentence: str
    metric: str
    paper_figure: str
    threshold: float
    direction: Direction
    fn: Callable[[Context], Measurement]

    def holds(self, value: float) -> bool:
        if not np.isfinite(value):
            return False
        return value >= self.threshold if self.direction == ">=" else value <= self.threshold


@dataclass
class Result:
    """The record of one claim run; serialised to ``results.json``.

    ``status`` is ``"holds"``, ``"fails"`` (ran, below threshold) or ``"error"`` (raised;
    ``error`` holds the traceback).
    """

    claim_id: str
    paper: str
    sentence: str
    metric: str
    paper_figure: str
    threshold: float
    direction: str
    measured: float | None
    holds: bool
    status: str
    seconds: float
    seed: int
    scale: str
    figures: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        names = {f.name for f in dataclasses.fields(cls)}
        missing = names - set(data)
        if missing:
            raise ValueError(f"Result data is missing fields: {sorted(missing)}")
        return cls(**{k: data[k] for k in names})


_REGISTRY: dict[str, Claim] = {}


def claim(
    claim_id: str,
    *,
    paper: str,
    sentence: str,
    metric: str,
    paper_figure: str,
    threshold: float,
    direction: Direction = ">=",
) -> Callable[[Callable[[Context], Measurement]], Callable[[Context], Measurement]]:
    """Register ``fn(ctx) -> Measurement`` as the claim ``claim_id`` (``"<method>.<name>"``)."""
    if direction not in (">=", "<="):
        raise ValueError(f"direction must be '>=' or '<=', got {direction!r}")
    if "." not in claim_id:
        raise ValueError(f"claim_id must look like '<method>.<name>', got {claim_id!r}")

    def register(fn: Callable[[Context], Measurement]) -> Callable[[Context], Measurement]:
        if claim_id in _REGISTRY and _REGISTRY[claim_id].fn is not fn:
            raise ValueError(f"claim {claim_id!r} is already registered")
        _REGISTRY[claim_id] = Claim(
            claim_id, paper, sentence, metric, paper_figure, float(threshold), direction, fn
        )
        return fn

    return register


def unregister(claim_id: str) -> None:
    """Remove a claim (used by tests that register their own)."""
    _REGISTRY.pop(claim_id, None)


def method_packages() -> list[str]:
    """Names of the method subpackages of ``iclr25`` (every subpackage but ``datasets``)."""
    import iclr25

    return sorted(
        m.name
        for m in pkgutil.iter_modules(iclr25.__path__)
        if m.ispkg and m.name not in {"datasets"} and not m.name.startswith("_")
    )


def discover() -> dict[str, Claim]:
    """Import every ``iclr25.<method>.claim`` module so its claims register; return the registry."""
    for name in method_packages():
        try:
            importlib.import_module(f"iclr25.{name}.claim")
        except ModuleNotFoundError as exc:
            if exc.name != f"iclr25.{name}.claim":
                raise
    return dict(sorted(_REGISTRY.items()))


def select(names: list[str], registry: dict[str, Claim]) -> list[Claim]:
    """Claims matching ``names``: exact ids or method prefixes (``mother`` -> ``mother.*``).

    Raises:
        KeyError: naming the unknown names.
    """
    if not names:
        return list(registry.values())
    chosen: dict[str, Claim] = {}
    unknown = []
    for name in names:
        hits = [c for cid, c in registry.items() if cid == name or cid.startswith(name + ".")]
        if not hits:
            unknown.append(name)
        chosen.update((c.id, c) for c in hits)
    if unknown:
        raise KeyError(unknown)
    return list(chosen.values())


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def run(c: Claim, scale: Scale, seed: int, figure_dir: Path) -> Result:
    """Run one claim; an exception becomes a ``status="error"`` result with its traceback."""
    scale = Scale(scale)
    seed_everything(seed)
    ctx = Context(scale=scale, seed=seed, figure_dir=Path(figure_dir), claim_id=c.id)
    common = dict(
        claim_id=c.id, paper=c.paper, sentence=c.sentence, metric=c.metric,
        paper_figure=c.paper_figure, threshold=c.threshold, direction=c.direction,
        seed=seed, scale=scale.value,
    )
    start = time.perf_counter()
    try:
        m = c.fn(ctx)
        if not isinstance(m, Measurement):
            raise TypeError(f"claim {c.id} returned {type(m).__name__}, expected Measurement")
        value = float(m.value)
    except Exception:
        return Result(measured=None, holds=False, status="error",
                      seconds=time.perf_counter() - start, error=traceback.format_exc(), **common)
    holds = c.holds(value)
    return Result(measured=value, holds=holds, status="holds" if holds else "fails",
                  seconds=time.perf_counter() - start, figures=list(m.figures),
                  details=dict(m.details), **common)
