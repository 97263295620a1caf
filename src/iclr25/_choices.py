"""Every fixed set of names the package takes from its user: one ``Literal`` each, defined
once here, read by the library (which checks an argument against it) and by the command
lines (whose options it types: ``iclr25._cli.choice``). Nothing here imports torch, so that
``iclr25 <method> --help`` imports none (a method's help defers its package's
``__init__``)."""

from __future__ import annotations

from typing import Literal, get_args

#: The synthetic degradations of :func:`iclr25.datasets.images.degrade`, in label order for
#: :class:`~iclr25.datasets.images.AllInOnePairs`.
Kind = Literal["noise", "blur", "motion_blur", "defocus", "jpeg", "haze", "low_light", "rain",
               "inpaint", "mosaic"]
KINDS: tuple[str, ...] = get_args(Kind)
#: What a restorer returns where its check finds its output worse (:mod:`iclr25._guard`).
Fallback = Literal["none", "classical", "input"]
FALLBACKS: tuple[str, ...] = get_args(Fallback)
#: DCPT's ``restore`` and low light's ``enhance`` (API and command line) when the caller names
#: no fallback and the check runs: "input", so that no output the check scores below its
#: input is returned (issue 68).
DEFAULT_FALLBACK: Fallback = "input"
#: DCPT's released backbones that :func:`iclr25.dcpt.load_official` reads.
Backbone = Literal["nafnet", "restormer"]
BACKBONES: tuple[str, ...] = get_args(Backbone)
#: Low-light networks: the paper's Retinex network or the Zero-DCE baseline.
LowLightMethod = Literal["retinex", "zero_dce"]
#: MoTHer's kurtosis direction along an edge (:data:`iclr25.mother.DIRECTIONS`).
Direction = Literal["finetune", "decreasing", "pretrain", "increasing", "none"]
#: MoTHer's distance between two models' weights (``iclr25.mother.distances``).
Metric = Literal["rms", "l1", "rank"]
METRICS: tuple[str, ...] = get_args(Metric)
#: Where LoCoDL's clients run: in this process or in gloo processes.
Engine = Literal["simulated", "gloo"]
#: ToSS's pseudo-labels' centre (:func:`iclr25.toss.pseudo.pseudo_covariance`): a weighted
#: local linear fit, or the neighbours' weighted mean (the paper's Algorithm 1).
Center = Literal["local_linear", "mean"]
#: :class:`~iclr25.toss.HeteroscedasticRegressor`'s and ``toss fit``'s default centre (issue
#: 68: the spec's remedy; the model's docstring says why it is not the paper's).
DEFAULT_CENTER: Center = "local_linear"
