"""Verdicts: the one table of what a claim can come to, and the judge that gives one.

:data:`VERDICTS` is read by everything that shows a verdict: the report (its label and the
summary chart's colour), the count line of the report and of ``iclr25 reproduce``, the ladder
(which verdicts do not stand on the figure alone) and the documentation's list of verdicts. A
new verdict is a row here, its rule in :func:`judge` and its sentence in :func:`why`; nothing
else names verdicts one by one (``tests/core/test_verdicts.py`` checks every consumer).
"""

from __future__ import annotations

import dataclasses
import math
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iclr25._format import num, sign
from iclr25.claims import Claim, Comparison, Evidence, Table, _plain, from_fields, meets

if TYPE_CHECKING:
    from iclr25.runner import ExperimentRecord

__all__ = ["STATUSES", "VERDICTS", "ClaimResult", "Verdict", "brief", "combine", "count_line",
           "judge", "settle", "strongest_competitor", "verdict", "why"]


@dataclass(frozen=True)
class Verdict:
    """One verdict a claim can come to.

    ``name`` is the ``status`` stored in results.json; ``label`` the report's Markdown for it;
    ``colour`` its dot on the summary chart (a matplotlib colour); ``phrase`` and ``plural``
    follow a count (``1 holds``, ``3 hold``); ``meaning`` says when it is given (the
    documentation's list); ``on_figure`` is whether it is the figure read against the
    threshold (a ladder's trend reads the figure alone and notes the rungs where it is not).
    """

    name: str
    label: str
    colour: str
    phrase: str
    plural: str
    meaning: str
    on_figure: bool


VERDICTS: tuple[Verdict, ...] = (
    Verdict("holds", "holds", "tab:green", "holds", "hold",
            "the measured figure meets the threshold, the control (if any) passed and the "
            "trivial arm (if any) does not meet it too", True),
    Verdict("fails", "**fails**", "tab:red", "fails", "fail",
            "the measured figure misses the threshold while the run could show it", True),
    Verdict("unsettled", "*unsettled*", "tab:purple", "unsettled", "unsettled",
            "over the draws, the mean is within one standard error of the threshold (or the "
            "trivial arm's is): the draws' spread does not separate holding from failing",
            False),
    Verdict("inconclusive", "*inconclusive*", "tab:gray", "inconclusive", "inconclusive",
            "a control is false (the baseline did not learn, beating its own untrained self "
            "by less than a stated margin; the task is saturated; the testbed cannot express "
            "the effect) or the figure is not finite: the run cannot separate method and "
            "baseline", False),
    Verdict("uninformative", "*uninformative*", "tab:orange", "uninformative", "uninformative",
            "a trivial arm (random, reversed, a construction true by design) meets the "
            "threshold too, so meeting it says nothing about the method", False),
    Verdict("error", "**error**", "tab:red", "error", "errors",
            "the experiment or the claim's reading of its evidence raised; the report shows "
            "the traceback", False),
)


def _names() -> tuple[str, ...]:
    return tuple(v.name for v in VERDICTS)


#: the verdicts' names in the table's order (the ``status`` of a :class:`ClaimResult`)
STATUSES: tuple[str, ...] = _names()


def verdict(name: str) -> Verdict:
    """The row of :data:`VERDICTS` called ``name``.

    Raises:
        KeyError: no verdict has that name.
    """
    for v in VERDICTS:
        if v.name == name:
            return v
    raise KeyError(f"no verdict is called {name!r}; the verdicts are {', '.join(_names())}")


def count_line(statuses: Sequence[str]) -> str:
    """``"1 holds, 3 fail, 0 inconclusive, ..."``: how many of ``statuses`` has each verdict,
    every verdict named, in the table's order."""
    n = {v.name: 0 for v in VERDICTS}
    for s in statuses:
        n[verdict(s).name] += 1
    return ", ".join(f"{n[v.name]} {v.phrase if n[v.name] == 1 else v.plural}" for v in VERDICTS)


@dataclass
class ClaimResult:
    """The record of one claim; ``status`` is one of :data:`STATUSES`.

    ``measured`` is the figure judged against the threshold; ``ours`` and ``baseline_value``
    are the two arms' values when the claim returned a :class:`Comparison`. ``control_ok`` is
    the declared control's verdict (None: no control) and ``control_read`` the evidence it
    read; ``trivial_value`` is the trivial arm's figure; ``competitors`` the other arms'
    values; ``reason`` says why a verdict is inconclusive, uninformative or an error, and
    ``why`` is the measured sentence the report ends a claim that does not hold with.

    Over several draws (:func:`combine`) the figures and arms are the means over the draws,
    ``draws``/``ours_draws``/``baseline_draws``/``trivial_draws`` the per-draw values, ``se``
    the standard error of the figure's mean and ``draws_needed`` how many draws would separate
    an ``unsettled`` mean from the threshold at the measured spread (None: no number would).
    """

    claim_id: str
    method: str
    experiment: str
    sentence: str
    metric: str
    unit: str
    paper_figure: str
    threshold: float
    direction: str
    measured: float | None
    holds: bool
    status: str
    error: str | None = None
    baseline: str | None = None
    ours: float | None = None
    baseline_value: float | None = None
    control_doc: str | None = None
    control_ok: bool | None = None
    control_read: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    trivial_doc: str | None = None
    trivial_value: float | None = None
    competitors: dict[str, float] = field(default_factory=dict)
    why: str | None = None
    budget: float = 1.0
    draws: list[float | None] = field(default_factory=list)
    ours_draws: list[float | None] = field(default_factory=list)
    baseline_draws: list[float | None] = field(default_factory=list)
    trivial_draws: list[float | None] = field(default_factory=list)
    se: float | None = None
    draws_needed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimResult:
        return cls(**from_fields(cls, data))


class _Reads:
    """The evidence as a control sees it: every field it reads is recorded for the report."""

    def __init__(self, ev: Evidence) -> None:
        self._ev = ev
        self.read: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        v = getattr(self._ev, name)
        if isinstance(v, Table):
            self.read[name] = f"table {v.title!r}"
        elif isinstance(v, (list, tuple)):
            self.read[name] = [_plain(x) for x in v]
        else:
            try:
                self.read[name] = _plain(v)
            except TypeError:
                self.read[name] = type(v).__name__
        return v


def _figure(got: float | Comparison) -> float:
    return float(got.value) if isinstance(got, Comparison) else float(got)


@dataclass(frozen=True)
class _Read:
    """Everything :func:`judge` reads from the evidence, before it decides."""

    value: float
    ours: float | None
    base: float | None
    control_ok: bool | None
    control_read: dict[str, Any]
    trivial: float | None
    competitors: dict[str, float]


def _read(c: Claim, ev: Evidence) -> _Read:
    """The claim's figure, arms, control, trivial arm and competitors; raises as they do."""
    got = c.read(ev)
    if isinstance(got, Comparison):
        if c.baseline is None:
            raise TypeError(f"claim {c.id} returned a Comparison but declares no baseline=")
        ours, base = float(got.ours), float(got.baseline)
    else:
        ours, base = None, None
    value = _figure(got)
    control_ok, read = None, {}
    if c.control is not None:
        reads = _Reads(ev)
        control_ok = bool(c.control(reads))
        read = reads.read
    trivial = None if c.trivial is None else _figure(c.trivial(ev))
    competitors = {} if c.competitors is None else {
        str(k): float(v) for k, v in c.competitors(ev).items()}
    return _Read(value, ours, base, control_ok, read, trivial, competitors)


def _decide(c: Claim, r: _Read) -> tuple[str, str | None]:
    """``(verdict name, reason)`` from what was read: the rule of :func:`judge`."""
    if r.control_ok is False:
        return "inconclusive", f"control failed: {c.control_doc}"
    if not math.isfinite(r.value):
        return "inconclusive", f"the measured value is {r.value}: the run gave no usable figure"
    if c.holds(r.value) and r.trivial is not None and c.holds(r.trivial):
        return "uninformative", f"the trivial arm ({c.trivial_doc}) meets the threshold too"
    return ("holds" if c.holds(r.value) else "fails"), None


def judge(c: Claim, ev: Evidence | None, record: ExperimentRecord | None = None,
          ) -> ClaimResult:
    """Read a claim's figure (its control, trivial arm and competitors) and give the verdict.

    A false control or a NaN/inf reading makes the verdict ``inconclusive`` with its reason;
    a figure that meets the threshold while the trivial arm's does too is ``uninformative``;
    otherwise the figure is compared with the threshold. ``ev`` None (the experiment raised,
    as ``record`` says) or a read that raises is an ``error``. ``record`` is the run that gave
    ``ev``, for its budget and error (None: a budget of 1 and no record). Every verdict but
    ``holds`` carries its measured ``why``.
    """
    common = dict(claim_id=c.id, method=c.method, experiment=c.experiment.id,
                  sentence=c.sentence, metric=c.metric, unit=c.unit,
                  paper_figure=c.paper_figure, threshold=c.threshold, direction=c.direction,
                  baseline=c.baseline, control_doc=c.control_doc, trivial_doc=c.trivial_doc,
                  budget=1.0 if record is None else record.budget)
    if ev is None:
        got = None if record is None else record.error
        error = f"experiment {c.experiment.id} failed" + ("" if got is None else f":\n{got}")
    else:
        try:
            read = _read(c, ev)
        except Exception:
            error = traceback.format_exc()
        else:
            status, reason = _decide(c, read)
            r = ClaimResult(measured=read.value, holds=status == "holds", status=status,
                            ours=read.ours, baseline_value=read.base,
                            control_ok=read.control_ok, control_read=read.control_read,
                            reason=reason, trivial_value=read.trivial,
                            competitors=read.competitors, **common)
            r.why = why(r)
            return r
    r = ClaimResult(measured=None, holds=False, status="error", error=error, **common)
    r.why = why(r)
    return r


# --- over draws -----------------------------------------------------------------------------------

def _mean_se(xs: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (sample standard deviation / sqrt n; 0 for one).

    Equal draws are their value with no error (a summed mean can round off it and land a
    figure that meets its threshold just below it)."""
    n = len(xs)
    if n < 2 or min(xs) == max(xs):
        return xs[0], 0.0
    m = math.fsum(xs) / n
    return m, math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (n - 1) / n)


def settle(mean: float, se: float, threshold: float, direction: str) -> str:
    """The draw rule: ``"holds"`` when ``mean`` moved one ``se`` toward failing still meets
    the threshold, ``"fails"`` when moved one ``se`` toward holding it still misses, else
    ``"unsettled"``. With ``se == 0`` (one draw) it is the plain comparison.

    >>> settle(0.8, 0.05, 0.7, ">="), settle(0.6, 0.05, 0.7, ">="), settle(0.72, 0.05, 0.7, ">=")
    ('holds', 'fails', 'unsettled')
    """
    toward = se if direction == ">=" else -se
    if meets(mean - toward, threshold, direction):
        return "holds"
    return "fails" if not meets(mean + toward, threshold, direction) else "unsettled"


def _needed(values: Sequence[float], threshold: float) -> int | None:
    """Draws that would make one standard error smaller than the mean's distance to the
    threshold, at the measured spread (None: the mean sits on the threshold)."""
    m, se = _mean_se(values)
    gap = abs(m - threshold)
    if gap <= 1e-9 * max(1.0, abs(threshold)):  # on the threshold, to rounding
        return None
    sd2 = se * se * len(values)
    return math.floor(sd2 / (gap * gap)) + 1


def _means(per: Sequence[dict[str, float]]) -> dict[str, float]:
    keys = dict.fromkeys(k for d in per for k in d)
    return {k: _mean_se([d[k] for d in per if k in d])[0] for k in keys}


def combine(per_draw: Sequence[ClaimResult]) -> ClaimResult:
    """One claim's verdict over its draws (one :func:`judge` result per draw, in draw order).

    An error in any draw makes the claim an error naming the draw; a control false on any
    draw, or a figure that is not finite, makes it inconclusive; otherwise the figure is the
    mean over the draws, judged by :func:`settle` (one standard error of the mean), and a
    declared trivial arm by the same rule: a figure that holds while the trivial arm holds too
    is uninformative, while the trivial arm is unsettled it is unsettled. One draw is its own
    verdict.
    """
    if not per_draw:
        raise ValueError("per_draw must hold at least one draw's result")
    first, n = per_draw[0], len(per_draw)

    def col(name: str) -> list[Any]:
        return [getattr(r, name) for r in per_draw]

    figures = dict(draws=col("measured"), ours_draws=col("ours"),
                   baseline_draws=col("baseline_value"), trivial_draws=col("trivial_value"))
    if n == 1:
        return dataclasses.replace(first, **figures, se=None if first.measured is None else 0.0)
    keep = {k: getattr(first, k) for k in _DECLARED}
    bad = [d for d, r in enumerate(per_draw) if r.status == "error"]
    if bad:
        r = ClaimResult(measured=None, holds=False, status="error", **keep, **figures,
                        reason=f"draw {bad[0]} of {n} raised",
                        error=f"draw {bad[0]} of {n}:\n{per_draw[bad[0]].error}")
        r.why = why(r)
        return r
    control = None if first.control_ok is None else all(col("control_ok"))
    # a control may stop reading early on one draw: every field any draw read, per draw
    read = {k: [r.control_read.get(k) for r in per_draw]
            for k in dict.fromkeys(k for r in per_draw for k in r.control_read)}
    values = col("measured")
    m, se = _mean_se(values) if all(math.isfinite(v) for v in values) else (math.nan, math.nan)
    arms = {k: _mean_se(v)[0] if None not in v else None for k, v in (
        ("ours", col("ours")), ("baseline_value", col("baseline_value")),
        ("trivial_value", col("trivial_value")))}
    r = ClaimResult(measured=m, holds=False, status="", control_ok=control, control_read=read,
                    competitors=_means(col("competitors")), se=se, **arms, **keep, **figures)
    off = [d for d, ok in enumerate(col("control_ok")) if ok is False]
    r.status, r.reason = _over_draws(r, off, n)
    r.holds = r.status == "holds"
    if r.status == "unsettled":
        r.draws_needed = _needed(r.trivial_draws if _on_trivial(r) else values, r.threshold)
    r.why = why(r)
    return r


_DECLARED = ("claim_id", "method", "experiment", "sentence", "metric", "unit", "paper_figure",
             "threshold", "direction", "baseline", "control_doc", "trivial_doc", "budget")


def _on_trivial(r: ClaimResult) -> bool:
    """Whether an unsettled verdict is the trivial arm's (its figure held): only then does
    :func:`_over_draws` give it a reason."""
    return r.status == "unsettled" and r.reason is not None


def _over_draws(r: ClaimResult, off: list[int], n: int) -> tuple[str, str | None]:
    """``(verdict, reason)`` of a claim whose draws all gave a result (``off``: the draws
    whose control failed): see :func:`combine`."""
    if off:
        return "inconclusive", (f"control failed on draw{'s' * (len(off) > 1)} "
                                f"{', '.join(map(str, off))} of {n}: {r.control_doc}")
    if not math.isfinite(r.measured):
        return "inconclusive", "a draw gave no usable figure"
    status = settle(r.measured, r.se, r.threshold, r.direction)
    if status != "holds" or r.trivial_value is None:
        return status, None
    t_mean, t_se = _mean_se(r.trivial_draws)
    trivial = settle(t_mean, t_se, r.threshold, r.direction)
    if trivial == "holds":
        return "uninformative", f"the trivial arm ({r.trivial_doc}) meets the threshold too"
    if trivial == "unsettled":
        return "unsettled", (f"the trivial arm ({r.trivial_doc}) is within one standard error "
                             f"of the threshold")
    return "holds", None


def strongest_competitor(r: ClaimResult) -> tuple[str, float] | None:
    """The competitor that beats ``ours`` by the most, in the claim's direction (or None)."""
    ours = r.ours if r.ours is not None else r.measured
    if ours is None or not r.competitors:
        return None
    better = max if r.direction == ">=" else min
    name = better(r.competitors, key=lambda k: r.competitors[k])
    v = r.competitors[name]
    beats = v > ours if r.direction == ">=" else v < ours
    return (name, v) if beats and math.isfinite(v) else None


def _missed(r: ClaimResult) -> str:
    """Why a figure that was read misses: the gap, both arms, the strongest competitor."""
    gap = abs(r.threshold - r.measured)
    text = f"{num(r.measured)} misses {sign(r.direction)} {num(r.threshold, 6)} by {num(gap, 3)}"
    if r.ours is not None:
        text += f" (ours {num(r.ours)} vs {r.baseline} {num(r.baseline_value)})"
    strong = strongest_competitor(r)
    if strong is not None:
        text += f"; the strongest competitor, {strong[0]}, reads {num(strong[1])}"
    if _trivial_beats(r):
        text += (f"; the trivial arm ({r.trivial_doc}) reads {num(r.trivial_value)}, better "
                 f"than ours")
    return text


def _trivial_beats(r: ClaimResult) -> bool:
    """Whether the trivial arm's figure is better than ours in the claim's direction."""
    t = r.trivial_value
    return (t is not None and r.measured is not None and math.isfinite(t)
            and (t > r.measured if r.direction == ">=" else t < r.measured))


def _unsettled(r: ClaimResult) -> str:
    """Why the draws do not decide: the per-draw values and the draws that would."""
    on_trivial = _on_trivial(r)
    draws = [v for v in (r.trivial_draws if on_trivial else r.draws) if v is not None] or [
        r.trivial_value if on_trivial else r.measured]
    mean, se = _mean_se(draws)
    what = f"the trivial arm ({r.trivial_doc})" if on_trivial else "the figure"
    text = (f"{what} reads {num(mean)} ± {num(se, 2)} (mean ± SE of {len(draws)} draws: "
            f"{', '.join(num(v) for v in draws)}), within one standard error of "
            f"{sign(r.direction)} {num(r.threshold, 6)}")
    if r.draws_needed is None:
        return text + "; no number of draws separates a mean that sits on the threshold"
    return text + f"; about {r.draws_needed} draws would separate them at this spread"


def why(r: ClaimResult, trend: str | None = None) -> str | None:
    """One sentence, from measured figures only, saying why a claim does not hold.

    ``None`` for a claim that holds. ``trend`` is the ladder's trend of the claim (see
    :func:`iclr25.ladder.trend`), appended when a ladder was run.
    """
    if r.status == "holds":
        return None
    if r.status == "error":
        text = f"{r.reason or 'the experiment raised'} before giving a figure"
    elif r.status == "unsettled":
        text = _unsettled(r)
    elif r.status == "uninformative":
        text = (f"the trivial arm ({r.trivial_doc}) reads {num(r.trivial_value)}, which also "
                f"meets {sign(r.direction)} {num(r.threshold, 6)}, so meeting it says nothing "
                f"about the method")
    elif r.control_ok is False:
        read = ", ".join(f"{k} = {num(v)}" for k, v in r.control_read.items())
        where = f" {r.reason.split(':')[0].removeprefix('control failed ')}" if (
            r.reason and len(r.draws) > 1) else ""
        text = f"the control failed{where} ({(r.control_doc or '').rstrip('.')})"
        text += f"; it read {read}" if read else ""
    elif r.measured is None or not math.isfinite(r.measured):
        text = r.reason or "the run gave no usable figure"
    else:
        text = _missed(r)
    if trend is not None:
        text += f"; ladder: {trend}"
    return text[0].upper() + text[1:] + "."


def brief(r: ClaimResult, trend: str | None = None) -> str:
    """The cause of a verdict in a few words, for the report's table of claims: what beat
    ours, which control failed, how far the figure is, or what the draws could not settle.

    >>> r = ClaimResult("m.c", "m", "m.e", "s", "metric", "dB", "p", 1.0, ">=", 0.5, False,
    ...                 "fails")
    >>> brief(r)
    'short by 0.5'
    """
    t = r.trivial_value
    if r.status == "error":
        text = r.reason or "the experiment raised"
    elif r.status == "uninformative":
        text = f"trivial arm meets it too ({num(t)})"
    elif r.status == "unsettled":
        text = (f"trivial arm within one SE ({len(r.trivial_draws)} draws)" if _on_trivial(r)
                else f"within one SE of the threshold ({len(r.draws)} draws)")
    elif r.control_ok is False:
        read = ", ".join(f"{k} = {num(v)}" for k, v in r.control_read.items())
        text = f"control failed ({read})" if read else "control failed"
    elif r.measured is None or not math.isfinite(r.measured):
        text = "no usable figure"
    elif r.status == "holds":
        margin = abs(r.measured - r.threshold)
        text = f"meets it by {num(margin, 3)}" + (f" ± {num(r.se, 2)} SE" if r.se else "")
    else:
        text = f"short by {num(abs(r.threshold - r.measured), 3)}"
        strong = strongest_competitor(r)
        if strong is not None:
            text += f"; {strong[0]} beats ours ({num(strong[1])})"
        if _trivial_beats(r):
            text += f"; trivial arm better ({num(t)})"
    return text + (f"; ladder: {trend}" if trend else "")
