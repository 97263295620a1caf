"""Hook linear layers, stream representation/gradient covariances, score the six CRH relations.

For a linear layer ``h_b = W h_a + b`` the CRH paper (Sec. 3) relates six matrices:

- representations ``H_a = cov(h_a)`` (layer input) and ``H_b = cov(h_b)`` (pre-activation output),
- neuron gradients ``G_a = cov(g_a)`` and ``G_b = cov(g_b)`` with ``g = -∂ℓ/∂h`` per sample,
- weights ``Z_a = WᵀW`` and ``Z_b = W Wᵀ``,

and asserts six proportionalities: forward (input side) f-RGA ``H_a ∝ G_a``, f-RWA
``H_a ∝ Z_a``, f-GWA ``G_a ∝ Z_a``; backward (output side) b-RGA ``H_b ∝ G_b``, b-RWA
``H_b ∝ Z_b``, b-GWA ``G_b ∝ Z_b``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from iclr25._checks import (
    check_class_targets,
    check_int,
    check_same_length,
    check_tensor,
    run_model,
)
from iclr25._contract import checked
from iclr25._format import num
from iclr25.crh.alignment import PowerLawFit, _alignments, _eigh, _power_law, rotation_null

#: relation name -> (first matrix, second matrix), in the paper's order.
RELATIONS: dict[str, tuple[str, str]] = {
    "f-RGA": ("H_a", "G_a"),
    "f-RWA": ("H_a", "Z_a"),
    "f-GWA": ("G_a", "Z_a"),
    "b-RGA": ("H_b", "G_b"),
    "b-RWA": ("H_b", "Z_b"),
    "b-GWA": ("G_b", "Z_b"),
}

#: PAH fits: "A~Z" means the exponent α in A ∝ Z^α, fitted over the eigenvectors of Z.
POWER_LAWS: dict[str, tuple[str, str]] = {
    "H_a~Z_a": ("H_a", "Z_a"),
    "G_a~Z_a": ("G_a", "Z_a"),
    "H_b~Z_b": ("H_b", "Z_b"),
    "G_b~Z_b": ("G_b", "Z_b"),
}


def _sum_cross_entropy(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(output, target, reduction="sum")


@checked
@dataclass
class LayerAlignment:
    """The probe's result for one linear layer.

    Attributes:
        name: the module's name in ``model.named_modules()``.
        n_samples: number of vectors accumulated (batch rows; tokens count separately for
            inputs with extra leading dimensions).
        matrices: "H_a", "G_a", "Z_a" (in_features x in_features) and "H_b", "G_b", "Z_b"
            (out_features x out_features), float64.
        scores: the six relations of ``RELATIONS`` -> alignment score (off-diagonal Pearson).
        exponents: the four ``POWER_LAWS`` fits (PAH exponents), computed on first access
            (two eigendecompositions, shared by the fits).
    """

    name: str
    n_samples: int
    matrices: dict[str, torch.Tensor]
    scores: dict[str, float]
    offdiag: bool = True

    def __repr__(self) -> str:
        # the matrices by shape only: printing a result printed six whole d x d matrices
        shapes = ", ".join(f"{k}: {tuple(v.shape)}" for k, v in self.matrices.items())
        scores = ", ".join(f"{k}: {num(v)}" for k, v in self.scores.items())
        return (f"LayerAlignment(name={self.name!r}, n_samples={self.n_samples}, "
                f"scores={{{scores}}}, matrices={{{shapes}}})")

    @functools.cached_property
    def exponents(self) -> dict[str, PowerLawFit]:
        """PAH exponents: ``A ∝ Z^α`` fitted over Z's eigenvectors, for each ``POWER_LAWS``."""
        eig = {z: _eigh(self.matrices[z]) for z in ("Z_a", "Z_b")}
        return {k: _power_law(self.matrices[a], eig[z]) for k, (a, z) in POWER_LAWS.items()}

    def null_scores(self, *, seed: int | torch.Generator = 0,
                    n_draws: int = 100) -> NullScores:
        """Rotation-null scores (n_draws,) of each relation, to compare ``scores`` with chance.

        An int seeds relation k with ``seed + k``; a Generator is drawn from in turn. Printed,
        the result summarises each relation (:class:`NullScores`).
        """
        if not isinstance(seed, torch.Generator):
            seed = check_int(seed, "seed", 0)
        return NullScores({rel: rotation_null(self.matrices[a], self.matrices[b],
                                   seed=seed if isinstance(seed, torch.Generator) else seed + k,
                                   n_draws=n_draws, offdiag=self.offdiag)
                for k, (rel, (a, b)) in enumerate(RELATIONS.items())})


class NullScores(dict):
    """:meth:`LayerAlignment.null_scores`: relation -> its (n_draws,) rotation-null scores.

    A plain dict of tensors, printed as each relation's mean |score| and 95% quantile of
    |score| (the chance level an observed score is read against), not as raw tensors.
    """

    def summary(self) -> dict[str, dict[str, float]]:
        """Relation -> ``{"mean_abs": .., "q95_abs": ..}`` of its null scores."""
        return {rel: {"mean_abs": float(v.abs().mean()),
                      "q95_abs": float(v.abs().quantile(0.95))} for rel, v in self.items()}

    def __repr__(self) -> str:
        draws = {len(v) for v in self.values()}
        rels = ", ".join(f"{rel}: mean |s| {num(s['mean_abs'])}, q95 {num(s['q95_abs'])}"
                         for rel, s in self.summary().items())
        return f"NullScores(n_draws={'/'.join(map(str, sorted(draws)))}; {rels})"


class _Moments:
    """Streaming sums of x and x xᵀ (float64), so no sample is stored."""

    def __init__(self) -> None:
        self.n = 0
        self.s: torch.Tensor | None = None
        self.ss: torch.Tensor | None = None

    def add(self, x: torch.Tensor) -> None:
        if self.s is None:
            self.s = x.sum(0)
            self.ss = x.T @ x
        else:
            self.s += x.sum(0)
            self.ss.addmm_(x.T, x)
        self.n += x.shape[0]

    def matrix(self, center: bool) -> torch.Tensor:
        assert self.s is not None and self.ss is not None
        m = self.ss / self.n
        if center:
            mu = self.s / self.n
            m = m - torch.outer(mu, mu)
        return 0.5 * (m + m.T)


@checked
class AlignmentProbe:
    """Measure the six CRH alignment relations and the PAH exponents of linear layers.

    Args:
        model: the network; it is not modified (no parameter or ``.grad`` changes; its
            train/eval flags are restored after ``run``; only with ``eval_mode=False`` do
            batch-norm layers update their running statistics, as in any training pass).
        layers: names (as in ``model.named_modules()``) of ``nn.Linear`` modules to probe; a
            single name; or None for every ``nn.Linear`` in the model.
        loss_fn: ``loss_fn(output, target)`` returning per-sample losses (summed here) or
            their *sum*. Default: cross-entropy with ``reduction="sum"``. A loss averaged over
            the batch would scale every sample's gradient by 1/batch_size, making the
            unnormalised gradient covariances depend on the loader's batch size, so an
            ``nn`` loss module with ``reduction="mean"`` is refused.
        normalize: divide each sample vector by its Euclidean norm before accumulating,
            ĥ = h/‖h‖ and ĝ = g/‖g‖ (the paper's main-text convention). Zero vectors stay zero.
        center: subtract the mean (covariances, the paper's convention) rather than
            uncentred second moments.
        offdiag: score with off-diagonal entries only (see ``alignment_score``).
        eval_mode: run the model in eval mode (dropout off, batch-norm on running
            statistics), so that each sample's gradient depends on that sample only.

    The per-sample gradient g_b = -∂ℓ/∂h_b is read from a zero tensor added to the layer's
    output (so it also works when the parameters are frozen); with a loss summed over the
    batch it equals the gradient of that sample's own loss. g_a = Wᵀ g_b is exact for a
    linear layer. ``W`` in ``Z_a``/``Z_b`` is the layer weight when ``run`` finishes.

    Paper: CRH (Sec. 3, relations 1-6), measurement protocol (Sec. 5), PAH (Sec. 4).
    """

    def __init__(
        self,
        model: nn.Module,
        layers: str | Sequence[str] | None = None,
        *,
        loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
        normalize: bool = True,
        center: bool = True,
        offdiag: bool = True,
        eval_mode: bool = True,
    ) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        modules = dict(model.named_modules())
        linear = [n for n, m in modules.items() if isinstance(m, nn.Linear)]
        if layers is None:
            if not linear:
                raise ValueError("layers=None but the model has no nn.Linear module to probe")
            names = linear
        else:
            names = [layers] if isinstance(layers, str) else list(layers)
            if not names:
                raise ValueError("layers is empty: give at least one nn.Linear module name")
            for n in names:
                if not isinstance(n, str):
                    raise TypeError(f"layers must hold module names (str), got {type(n).__name__}")
                if n not in modules:
                    raise ValueError(f"layers: no module named {n!r} in the model; nn.Linear "
                                     f"modules are {linear}")
                if not isinstance(modules[n], nn.Linear):
                    raise TypeError(f"layers: module {n!r} is a {type(modules[n]).__name__}, "
                                    f"not an nn.Linear; nn.Linear modules are {linear}")
            if len(set(names)) != len(names):
                raise ValueError(f"layers contains duplicates: {names}")
        if loss_fn is None:
            loss_fn = _sum_cross_entropy
        elif not callable(loss_fn):
            raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
        elif getattr(loss_fn, "reduction", None) == "mean":
            raise ValueError("loss_fn averages over the batch (reduction='mean'); use "
                             "reduction='sum' or 'none' so per-sample gradients are not scaled "
                             "by 1/batch_size")
        self.model = model
        self.layers = names
        self.loss_fn = loss_fn
        self.normalize = bool(normalize)
        self.center = bool(center)
        self.offdiag = bool(offdiag)
        self.eval_mode = bool(eval_mode)

    def _prep(self, x: torch.Tensor) -> torch.Tensor:
        """Rows of ``x`` as a new float64 (m, d) tensor, unit-normalised if asked."""
        x = x.detach().reshape(-1, x.shape[-1])
        if self.normalize:
            # clamp keeps exact-zero vectors (dead ReLU inputs, zero gradients) at zero
            norm = torch.linalg.vector_norm(x, dim=1, keepdim=True)
            x = x / norm.clamp_min(torch.finfo(x.dtype).tiny)
        return x.to(torch.float64, copy=True)

    def run(self, loader: Iterable) -> dict[str, LayerAlignment]:
        """Stream the loader once and return each probed layer's ``LayerAlignment``.

        Per-sample gradients cost one backward pass per batch: ``g_b`` is the gradient of
        the summed loss with respect to the layer's output (each row only depends on its
        own sample) and ``g_a = g_b W`` in closed form, so the four covariances are
        matrix products of (batch, width) blocks; nothing per sample is stored.

        Args:
            loader: an iterable of ``(inputs, targets)`` batches (e.g. a ``DataLoader``);
                ``model(inputs)`` and ``loss_fn(output, targets)`` must work on them.

        Returns:
            dict layer name -> LayerAlignment, in the order of ``layers``.

        Raises:
            ValueError: the loader is empty, or a probed layer was never called.
            TypeError: a batch is not an (inputs, targets) pair.
        """
        if hasattr(loader, "__len__") and len(loader) == 0:  # type: ignore[arg-type]
            raise ValueError("loader is empty: it yields no batches")
        modules = dict(self.model.named_modules())
        moments = {n: {k: _Moments() for k in ("h_a", "g_a", "h_b", "g_b")} for n in self.layers}
        captured: list[tuple[str, torch.Tensor]] = []
        flags = {m: m.training for m in self.model.modules()}
        handles = [modules[n].register_forward_hook(self._hook(n, moments[n], captured))
                   for n in self.layers]
        n_batches = 0
        try:
            if self.eval_mode:
                self.model.eval()
            for batch in loader:
                self._step(batch, captured, moments, modules)
                n_batches += 1
        finally:
            for h in handles:
                h.remove()
            for m, flag in flags.items():
                m.train(flag)
        if n_batches == 0:
            raise ValueError("loader is empty: it yields no batches")
        for n, mom in moments.items():
            bad = [k for k, m in mom.items() if not bool(torch.isfinite(m.ss).all())]
            if bad:  # a NaN anywhere would silently turn every alignment into NaN
                raise ValueError(f"layer {n!r}: {' and '.join(bad)} hold NaN or inf; the "
                                 f"inputs, weights or loss are not finite")
        return {n: self._result(n, moments[n], modules[n].weight) for n in self.layers}

    def _hook(self, name: str, mom: dict[str, _Moments],
              captured: list[tuple[str, torch.Tensor]]) -> Callable:
        def hook(module: nn.Module, inputs: tuple, output: torch.Tensor) -> torch.Tensor:
            # Accumulate h_a, h_b now (copies): the input may be changed in place later in
            # the forward pass (e.g. ``x += f(x)``), which frozen weights would not catch.
            mom["h_a"].add(self._prep(inputs[0]))
            mom["h_b"].add(self._prep(output))
            # Adding a zero leaf lets autograd hand us ∂ℓ/∂h_b even for frozen weights,
            # without cutting the graph that earlier probed layers need. Returning a new
            # tensor also keeps that gradient right when a later op works in place
            # (``nn.ReLU(inplace=True)``): it rewrites the sum, not what we differentiate.
            probe = torch.zeros_like(output, requires_grad=True)
            captured.append((name, probe))
            return output + probe
        return hook

    def _step(self, batch: object, captured: list[tuple[str, torch.Tensor]],
              moments: dict[str, dict[str, _Moments]], modules: dict[str, nn.Module]) -> None:
        """One batch: forward with hooks, one backward to the probes, accumulate g_a, g_b."""
        if not isinstance(batch, (tuple, list)) or len(batch) != 2:
            raise TypeError(f"loader must yield (inputs, targets) pairs, got "
                            f"{type(batch).__name__}")
        x, y = batch
        x = check_tensor(x, "x (the batch's inputs)", floating=True, min_ndim=1)
        if isinstance(y, torch.Tensor) or self.loss_fn is _sum_cross_entropy:
            y = check_tensor(y, "y (the batch's targets)", min_ndim=1, finite=False)
            check_same_length(x=x, y=y)
        captured.clear()
        with torch.enable_grad():
            out = run_model(self.model, x, "x")
            if self.loss_fn is _sum_cross_entropy:
                y = check_class_targets(y, "y", len(x), out.shape[-1], device=out.device)
            loss = self.loss_fn(out, y)
            if loss.ndim > 0:
                loss = loss.sum()
            grads = torch.autograd.grad(loss, [c[1] for c in captured], allow_unused=True)
        for (name, probe), grad in zip(captured, grads, strict=True):
            g_b = -grad if grad is not None else torch.zeros_like(probe)
            g_a = g_b @ modules[name].weight.detach().to(g_b.dtype)  # g_a = Wᵀ g_b per row
            moments[name]["g_b"].add(self._prep(g_b))
            moments[name]["g_a"].add(self._prep(g_a))

    def _result(self, name: str, mom: dict[str, _Moments],
                weight: torch.Tensor) -> LayerAlignment:
        if mom["h_a"].n == 0:
            raise ValueError(f"layer {name!r} was never called during the forward pass")
        W = weight.detach().to(torch.float64)
        mats = {"H_a": mom["h_a"].matrix(self.center), "G_a": mom["g_a"].matrix(self.center),
                "Z_a": W.T @ W,
                "H_b": mom["h_b"].matrix(self.center), "G_b": mom["g_b"].matrix(self.center),
                "Z_b": W @ W.T}
        scores = {}
        for side in ("a", "b"):  # the three matrices of a side have one shape: score at once
            keys = [f"H_{side}", f"G_{side}", f"Z_{side}"]
            table = _alignments(torch.stack([mats[k] for k in keys]), self.offdiag).tolist()
            for rel, (a, b) in RELATIONS.items():
                if a[-1] == side:
                    scores[rel] = table[keys.index(a)][keys.index(b)]
        scores = {rel: scores[rel] for rel in RELATIONS}
        return LayerAlignment(name, mom["h_a"].n, mats, scores, self.offdiag)
