"""LoCoDL (Condat, Maranjyan, Richtárik, ICLR 2025, Algorithm 1) and the baselines it beats.

All functions solve min_x (1/n) Σ_i f_i(x) + g(x) for a client objective
(:class:`~iclr25.locodl.objectives.ClientLogistic` / ``ClientRidge``), vectorised over the
clients a process holds, and count uplink bits per client (float_bits = 32, as the paper).
The engine ``comm`` averages messages over clients: :class:`SimulatedComm` (default, all
clients here) or :class:`DistributedComm` (torch.distributed, a block of clients per rank).
The shared coin θ_t is drawn from ``seed`` on every rank and client i's compressor draws from
(seed, i), so the iterates do not depend on how clients are laid out over processes.

Baselines (theorem parameters; g is folded into each client, F_i = f_i + g, so they see the
easier κ_F = (L + μ)/(2μ) ≈ κ/2):
  * ``gd``: gradient descent, γ = 2/(L_F + μ_F), 32d bits a round.
  * ``scaffnew``: ProxSkip/Scaffnew (Mishchenko et al. 2022), γ = 1/L_F, p = 1/√κ_F.
  * ``diana``: DIANA (Mishchenko et al. 2019), α = 1/(1+ω), γ = 1/((1 + 2ω/n) L_F).
  * ``adiana``: ADIANA (Li et al. 2020, Algorithm 2), two compressed vectors a round.
"""

from __future__ import annotations

import contextlib
import math
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning

from iclr25._checks import check_int, check_range, user_stacklevel
from iclr25._contract import Floats1D, NonNegative, Positive, PositiveInt, checked
from iclr25._progress import progress_bar
from iclr25.locodl.comm import SimulatedComm
from iclr25.locodl.compressors import (
    ClientStreams,
    Compressor,
    RandK,
    densify,
    make_compressor,
)
from iclr25.locodl.objectives import _ClientObjective

_SHOW_EVERY = 100  # iterations between progress updates (an iteration can take microseconds)
# the remedy the condition-number refusal names; the command line says it in its own words
RESCALE_HINT = ("rescale the data (standardise its columns, or divide it by the objective's "
                "data_scale) or raise alpha")


@checked
@dataclass
class Run:
    """The result of one optimisation run.

    Attributes:
        x: (d,) the model (LoCoDL's y).
        rounds: communication rounds. iterations: local steps (= rounds for GD/DIANA/ADIANA).
        uplink_bits: bits one client sent in all (counted as the paper: float_bits-bit values
            plus ⌈log2 d⌉-bit indices).
        wire_bytes: payload bytes one client actually put on the wire (the engine's format).
        history: (h, 3) float64 rows (iteration, uplink bits, error): error ‖x − x*‖ when
            ``x_star`` was given, else the relative change of x between rounds.
        converged: whether the stopping tolerance was reached.
    """

    x: torch.Tensor
    rounds: int
    iterations: int
    uplink_bits: float
    wire_bytes: int
    history: torch.Tensor
    converged: bool
    params: dict = field(default_factory=dict)


def client_seed(seed: int, client: int) -> int:
    """The seed of client ``client``'s compressor stream, from (seed, client)."""
    return int(np.random.SeedSequence([seed, client]).generate_state(1, np.uint64)[0] >> 1)


class _Coins:
    """The shared coin θ_t ~ Bernoulli(p): drawn in fixed chunks from ``seed`` on every rank."""

    def __init__(self, seed: int, p: float) -> None:
        self.g = torch.Generator().manual_seed(seed)
        self.p, self.buf, self.i = p, None, 4096

    def __call__(self) -> bool:
        if self.i == 4096:
            self.buf, self.i = torch.rand(4096, generator=self.g, dtype=torch.float64).tolist(), 0
        self.i += 1
        return self.buf[self.i - 1] < self.p


def check_condition(objective: _ClientObjective) -> None:
    """Refuse an ``objective`` whose condition number L/μ float64 cannot resolve: the step
    sizes' 2/(L + μ) rounds onto their bound 2/L, so no step size is left. The bound 4ε
    (L/μ above about 1.1e15) keeps a factor of about 4 from where that rounding starts
    (about 4.5e15), so GD's 2/(L + 3μ) and DIANA's steps stay distinct from their bounds too."""
    L, mu = objective.L, objective.mu
    if mu < 4 * sys.float_info.epsilon * L:
        kappa = L / mu if mu > 0 else math.inf   # μ = α/2 underflows to 0
        raise ValueError(f"the objective's condition number L/mu = {kappa:.3g} is beyond "
                         f"float64's resolution, so no step size is left; {RESCALE_HINT}")


class _Setup:
    """Validation and the pieces every algorithm shares (local block, streams, stopping)."""

    float_bits = 32  # bits per value sent, as the paper counts them

    def __init__(self, objective, compressor, comm, seed, stop: tuple) -> None:
        """``stop`` is the run's ``(max_iter, tol, x_star, max_bits)``."""
        max_iter, tol, x_star, max_bits = stop
        if not isinstance(objective, _ClientObjective):
            raise TypeError(f"objective must be a ClientLogistic or ClientRidge, got "
                            f"{type(objective).__name__}")
        self.comp: Compressor = make_compressor(compressor)
        self.d, self.n = objective.d, objective.n_clients
        self.comp.check(self.d)
        self.max_iter = check_int(max_iter, "max_iter", 1)
        self.tol = None if tol is None else check_range(tol, "tol", 0.0)
        self.max_bits = None if max_bits is None else check_range(max_bits, "max_bits", 0.0,
                                                                  low_open=True)
        if isinstance(seed, torch.Generator):
            seed = int(torch.randint(2**62, (1,), generator=seed))
        elif seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
        self.seed = check_int(seed, "seed", 0)
        self.dev, self.dtype = objective.device, objective.dtype
        self.x_star = None
        if x_star is not None:
            xs = torch.as_tensor(x_star)
            if xs.shape != (self.d,) or not bool(torch.isfinite(xs).all()):
                raise ValueError(f"x_star must be a finite vector of shape ({self.d},), got "
                                 f"{tuple(xs.shape)}")
            self.x_star = xs.to(self.dev, self.dtype)
        self.L, self.mu = objective.L, objective.mu
        check_condition(objective)
        self.comm = SimulatedComm() if comm is None else comm
        if not hasattr(self.comm, "setup"):
            raise TypeError(f"comm must be SimulatedComm or DistributedComm, got "
                            f"{type(comm).__name__}")
        self.omega = self.comp.omega(self.d)
        self.bits_round = self.comp.bits(self.d, self.float_bits)
        self.objective = objective

    def start(self):
        """Called after the algorithm checked its own parameters: split clients, seed streams."""
        lo, hi = self.comm.setup(self.n)
        self.local = self.objective if (lo, hi) == (0, self.n) else self.objective.subset(lo, hi)
        self.m = hi - lo
        # CPU streams on every device: a seed draws the same compressions on CPU and CUDA
        self.gens = ClientStreams([client_seed(self.seed, i) for i in range(lo, hi)], "cpu")
        self.history: list[tuple[float, float, float]] = []
        self.bits = 0.0
        self.prev: torch.Tensor | None = None
        return self.local

    def zeros(self, rows: int | None = None) -> torch.Tensor:
        shape = (self.d,) if rows is None else (rows, self.d)
        return torch.zeros(shape, dtype=self.dtype, device=self.dev)

    def average(self, V: torch.Tensor, comp: Compressor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Compress each local row, average over all clients: (dense local rows, mean (d,))."""
        comp = self.comp if comp is None else comp
        if comp.sparse and self.comm.sparse:
            idx, val = comp.compress(V, self.gens)
            return densify(idx, val, self.d), self.comm.mean_sparse(idx, val, self.d)
        D = densify(*comp.compress(V, self.gens), self.d)
        return D, self.comm.mean(D)

    def check(self, t: int, x: torch.Tensor) -> bool:
        """Record (t, bits, error); True when the run should stop."""
        if self.x_star is not None:
            err = float(torch.linalg.vector_norm(x - self.x_star))
            done = self.tol is not None and err <= self.tol
        else:
            if self.prev is None:
                err = math.inf
            else:
                err = float(torch.linalg.vector_norm(x - self.prev)
                            / max(1.0, float(torch.linalg.vector_norm(x))))
            self.prev = x.clone()
            done = self.tol is not None and err <= self.tol
        self.history.append((float(t), self.bits, err))
        self.done = done
        return done or (self.max_bits is not None and self.bits >= self.max_bits)

    @contextlib.contextmanager
    def progress(self, name: str, verbose: bool | None) -> Iterator[Callable[[int, int], None]]:
        """Yield ``tick(t, rounds)``: a bar over the iterations, updated every
        ``_SHOW_EVERY`` with the rounds and the last error (or change); per ``verbose``."""
        shown = "error" if self.x_star is not None else "change"  # history's third column
        # the bar runs to the cap; a run that converges ends it early
        with progress_bar(self.max_iter, f"{name} iterations (at most)",
                          verbose=verbose) as advance:
            def tick(t: int, rounds: int) -> None:
                if t % _SHOW_EVERY == 0:
                    last = self.history[-1][2] if self.history else math.inf
                    advance(_SHOW_EVERY, rounds=rounds, **{shown: last})

            yield tick

    def run(self, name: str, x, rounds, iterations, **params) -> Run:
        """The Run; a ``ConvergenceWarning`` (as scikit-learn's solvers) when it ended at
        ``max_iter`` before ``tol`` (a ``max_bits`` stop is the caller's budget, not a
        failure)."""
        h = torch.tensor(self.history, dtype=torch.float64).reshape(-1, 3)
        converged = bool(getattr(self, "done", False))
        if not converged and iterations >= self.max_iter:
            warnings.warn(ConvergenceWarning(self._cap_message(name, rounds)),
                          stacklevel=user_stacklevel())
        return Run(x=x, rounds=rounds, iterations=iterations, uplink_bits=self.bits,
                   wire_bytes=self.comm.wire_bytes, history=h, converged=converged,
                   params=params)

    def _cap_message(self, name: str, rounds: int) -> str:
        ran = f"{name} ran to max_iter={self.max_iter} iterations ({rounds} rounds)"
        if self.tol is None:
            return (f"{ran} with no stopping tolerance (tol=None): pass tol to stop once "
                    f"converged, or a smaller max_iter")
        what = "error ||x - x_star||" if self.x_star is not None else "change between rounds"
        last = self.history[-1][2] if self.history else math.inf
        seen = f"last {last:.3g}" if last < math.inf else "none measured yet"
        return f"{ran} before the {what} reached tol={self.tol:g} ({seen}); raise max_iter"


def _locodl_params(S: _Setup, gamma: float | None, p: float | None, rho: float | None,
                   chi: float | None) -> tuple[float, float, float, float]:
    """LoCoDL's (γ, p, ρ, χ): each given one checked, Theorem 3.1's default for each None."""
    L, mu, omega = S.L, S.mu, S.omega
    omega_av = omega / S.n
    if gamma is None:
        gamma = 2.0 / (L + mu)
    gamma = check_range(gamma, "gamma", 0.0, 2.0 / L, low_open=True, high_open=True)
    if p is None:
        p = min(1.0, math.sqrt((1 + omega) * (1 + omega_av) * mu / L))
    p = check_range(p, "p", 0.0, 1.0, low_open=True)
    rho = check_range(1 / (1 + omega_av) if rho is None else rho, "rho", 0.0, low_open=True)
    chi = check_range(1 / (1 + omega_av) if chi is None else chi, "chi", 0.0, 1.0,
                      low_open=True)
    return gamma, p, rho, chi


@checked
def locodl(objective: _ClientObjective,
           compressor: str | Compressor = RandK(1), *, gamma: float | None = None,
           p: float | None = None, rho: float | None = None, chi: float | None = None,
           max_iter: int = 100_000, tol: float | None = None, x_star: Floats1D | None = None,
           comm: SimulatedComm | None = None,
           seed: int | torch.Generator | None = 0, max_bits: float | None = None,
           verbose: bool | None = False) -> Run:
    """Minimise (1/n) Σ f_i + g with LoCoDL: local steps, compressed uplink (Algorithm 1).

    Each iteration every client makes a local step x̂_i = x_i − γ∇f_i(x_i) + γu_i and updates
    its copy ŷ = y − γ∇g(y) + γv; with probability p (a coin shared by all) the clients send
    d_i = C_i(x̂_i − ŷ), the server averages d̄ = (1/2n) Σ d_j, and
    x_i ← (1−ρ)x̂_i + ρ(ŷ + d̄), u_i ← u_i + pχ/(γ(1+2ω)) (d̄ − d_i), y ← ŷ + ρd̄,
    v ← v + pχ/(γ(1+2ω)) d̄; otherwise x_i ← x̂_i, y ← ŷ. (1/n) Σ u_i + v = 0 throughout.

    Args:
        objective: a ClientLogistic or ClientRidge (n clients, d features).
        compressor: a Compressor or its name ("rand-1", "natural", "rand-3+natural", "none").
        gamma: step, default 2/(L + μ); must lie in (0, 2/L).
        p: communication probability, default min(1, √((1+ω)(1+ω_av)/κ)), κ = L/μ.
        rho, chi: default 1/(1+ω_av), ω_av = ω/n (Theorem 3.1: 2ρ − ρ²(1+ω_av) − χ ≥ 0).
        max_iter: iterations at most (ending there before ``tol`` warns
            ``sklearn.exceptions.ConvergenceWarning``). tol: stop at ‖y − x*‖ ≤ tol if
            ``x_star`` is given, else
            at ‖y_r − y_{r−1}‖ ≤ tol·max(1, ‖y_r‖) between communication rounds.
        x_star: (d,) the optimum, to measure the error. comm: the engine (SimulatedComm()).
        seed: the coin and compressor streams. max_bits: stop once a client sent this many.
        verbose: a progress bar over the iterations with the rounds and the last change (the
            error, with ``x_star``); None: on a terminal only; False (default): none.

    Returns:
        Run with ``x`` = y (d,), rounds, uplink bits per client, history.

    Raises:
        ValueError/TypeError: naming the bad argument (gamma ≥ 2/L, p ∉ (0, 1], k > d, ...).

    Examples:
        >>> import torch
        >>> from iclr25.locodl import ClientLogistic, locodl
        >>> g = torch.Generator().manual_seed(0)
        >>> X = torch.randn(200, 5, generator=g, dtype=torch.float64)
        >>> y = (X[:, 0] > 0).long()
        >>> f = ClientLogistic(X, y, torch.arange(200) % 4, alpha=0.1)
        >>> run = locodl(f, "rand-2", tol=1e-10, x_star=f.solve())
        >>> run.converged
        True
    """
    S = _Setup(objective, compressor, comm, seed, (max_iter, tol, x_star, max_bits))
    omega = S.omega
    gamma, p, rho, chi = _locodl_params(S, gamma, p, rho, chi)
    f = S.start()
    c = p * chi / (gamma * (1 + 2 * omega))
    X, U = S.zeros(S.m), S.zeros(S.m)
    y, v = S.zeros(), S.zeros()
    coin = _Coins(S.seed, p)
    rounds, t = 0, 0
    with S.progress("LoCoDL", verbose) as tick:
        while t < S.max_iter:
            t += 1
            tick(t, rounds)
            Xh = X - gamma * (f.grad(X) - U)
            yh = y - gamma * (f.grad_g(y) - v)
            if coin():
                D, dmean = S.average(Xh - yh)
                dbar = dmean / 2
                X = (1 - rho) * Xh + rho * (yh + dbar)
                U = U + c * (dbar - D)
                y = yh + rho * dbar
                v = v + c * dbar
                rounds += 1
                S.bits += S.bits_round
                if S.check(t, y):
                    break
            else:
                X, y = Xh, yh
                if S.x_star is not None and S.check(t, y):
                    break
    out = S.run("LoCoDL", y, rounds, t, gamma=gamma, p=p, rho=rho, chi=chi, omega=omega)
    out.state = {"X": X, "U": U, "y": y, "v": v}
    return out


@checked
def gd(objective: _ClientObjective,
       compressor: str | Compressor = "none", *, gamma: float | None = None,
       max_iter: int = 100_000, tol: float | None = None, x_star: Floats1D | None = None,
           comm: SimulatedComm | None = None,
       seed: int | torch.Generator | None = 0, max_bits: float | None = None,
       verbose: bool | None = False) -> Run:
    """Distributed gradient descent: every round each client sends ∇F_i(x) uncompressed.

    γ defaults to 2/(L_F + μ_F), F_i = f_i + g. ``compressor`` must be "none". Arguments
    (``verbose`` too) and return as :func:`locodl`.
    """
    S = _Setup(objective, "none", comm, seed, (max_iter, tol, x_star, max_bits))
    if make_compressor(compressor).omega(S.d) != 0:
        raise ValueError("compressor must be 'none' for gd (use diana to compress)")
    LF, muF = S.L + S.mu, 2 * S.mu
    gamma = check_range(2 / (LF + muF) if gamma is None else gamma, "gamma", 0.0, 2 / LF,
                        low_open=True, high_open=True)
    f = S.start()
    x = S.zeros()
    t = 0
    with S.progress("GD", verbose) as tick:
        while t < S.max_iter:
            t += 1
            tick(t, t)
            _, gmean = S.average(f.grad(x.expand(S.m, -1)))
            x = x - gamma * (gmean + f.grad_g(x))
            S.bits += S.bits_round
            if S.check(t, x):
                break
    return S.run("GD", x, t, t, gamma=gamma)


@checked
def scaffnew(objective: _ClientObjective,
             compressor: str | Compressor = "none", *, gamma: float | None = None,
             p: float | None = None, max_iter: int = 100_000, tol: float | None = None,
             x_star: Floats1D | None = None,
           comm: SimulatedComm | None = None, seed: int | torch.Generator | None = 0,
             max_bits: float | None = None) -> Run:
    """Scaffnew/ProxSkip (Mishchenko et al., ICML 2022): local steps with control variates h_i,
    averaging with probability p; uncompressed. γ = 1/L_F, p = 1/√κ_F by default."""
    S = _Setup(objective, "none", comm, seed, (max_iter, tol, x_star, max_bits))
    if make_compressor(compressor).omega(S.d) != 0:
        raise ValueError("compressor must be 'none' for scaffnew")
    LF, muF = S.L + S.mu, 2 * S.mu
    gamma = check_range(1 / LF if gamma is None else gamma, "gamma", 0.0, 2 / LF,
                        low_open=True, high_open=True)
    p = check_range(min(1.0, math.sqrt(muF / LF)) if p is None else p, "p", 0.0, 1.0,
                    low_open=True)
    f = S.start()
    X, H = S.zeros(S.m), S.zeros(S.m)
    coin = _Coins(S.seed, p)
    rounds, t = 0, 0
    x = S.zeros()
    while t < S.max_iter:
        t += 1
        Xh = X - gamma * (f.grad(X) + f.grad_g(X) - H)
        if coin():
            _, x = S.average(Xh - (gamma / p) * H)
            H = H + (p / gamma) * (x - Xh)
            X = x.expand(S.m, -1).clone()
            rounds += 1
            S.bits += S.bits_round
            if S.check(t, x):
                break
        else:
            X = Xh
    return S.run("Scaffnew", x, rounds, t, gamma=gamma, p=p)


@checked
def diana(objective: _ClientObjective,
          compressor: str | Compressor = RandK(1), *, gamma: float | None = None,
          alpha: float | None = None, max_iter: int = 100_000, tol: float | None = None,
          x_star: Floats1D | None = None,
           comm: SimulatedComm | None = None, seed: int | torch.Generator | None = 0,
          max_bits: float | None = None, verbose: bool | None = False) -> Run:
    """DIANA (Mishchenko et al. 2019): clients send C(∇F_i(x) − h_i) and learn shifts h_i;
    α = 1/(1+ω), γ = 1/((1 + 2ω/n) L_F) by default; ``verbose`` as :func:`locodl`."""
    S = _Setup(objective, compressor, comm, seed, (max_iter, tol, x_star, max_bits))
    LF = S.L + S.mu
    a = check_range(1 / (1 + S.omega) if alpha is None else alpha, "alpha", 0.0, 1.0,
                    low_open=True)
    gamma = check_range(1 / ((1 + 2 * S.omega / S.n) * LF) if gamma is None else gamma,
                        "gamma", 0.0, 2 / LF, low_open=True, high_open=True)
    f = S.start()
    x, h, H = S.zeros(), S.zeros(), S.zeros(S.m)
    t = 0
    with S.progress("DIANA", verbose) as tick:
        while t < S.max_iter:
            t += 1
            tick(t, t)
            G = f.grad(x.expand(S.m, -1)) + f.grad_g(x)
            M, mmean = S.average(G - H)
            x = x - gamma * (h + mmean)
            H = H + a * M
            h = h + a * mmean
            S.bits += S.bits_round
            if S.check(t, x):
                break
    return S.run("DIANA", x, t, t, gamma=gamma, alpha=a)


@checked
def adiana_params(L: Positive, mu: Positive, omega: NonNegative, n: PositiveInt,
                  eta: Positive | None = None) -> dict:
    """ADIANA's theorem parameters (Li, Kovalev, Qian, Richtárik 2020, Theorem for Alg. 2).

    α = 1/(1+ω); p = min(1, max(1, √(n/(32ω)) − 1)/(2(1+ω))); η = min(1/(2L),
    n/(64ω(2p(ω+1)+1)² L)); θ1 = min(1/4, √(ημ/p)), θ2 = 1/2, γ = η/(2(θ1 + ημ)), β = 1 − γμ.
    A given ``eta`` replaces η and θ1, γ, β follow from it.

    Raises:
        ValueError: ``mu > L`` (no function is more strongly convex than it is smooth), or
            a constant out of range (``n`` clients >= 1).
    """
    if mu > L:
        raise ValueError(f"mu must be <= L (strong convexity cannot exceed smoothness), got "
                         f"mu={mu:g} > L={L:g}")
    if omega == 0:
        p, eta0 = 1.0, 1 / (2 * L)
    else:
        p = min(1.0, max(1.0, math.sqrt(n / (32 * omega)) - 1) / (2 * (1 + omega)))
        eta0 = min(1 / (2 * L), n / (64 * omega * (2 * p * (omega + 1) + 1) ** 2 * L))
    eta = eta0 if eta is None else eta
    theta1 = min(0.25, math.sqrt(eta * mu / p))
    gam = eta / (2 * (theta1 + eta * mu))
    return dict(alpha=1 / (1 + omega), p=p, eta=eta, theta1=theta1, theta2=0.5, gamma=gam,
                beta=1 - gam * mu)


@checked
def adiana(objective: _ClientObjective,
           compressor: str | Compressor = RandK(1), *, gamma: float | None = None,
           max_iter: int = 100_000, tol: float | None = None, x_star: Floats1D | None = None,
           comm: SimulatedComm | None = None,
           seed: int | torch.Generator | None = 0, max_bits: float | None = None) -> Run:
    """ADIANA (Li et al., ICML 2020, Algorithm 2): accelerated DIANA; each round a client sends
    two compressed vectors, C(∇F_i(x^k) − h_i) and C(∇F_i(w^k) − h_i). ``gamma`` is its step η
    (default: the theorem's, :func:`adiana_params`)."""
    S = _Setup(objective, compressor, comm, seed, (max_iter, tol, x_star, max_bits))
    LF, muF = S.L + S.mu, 2 * S.mu
    if gamma is not None:
        check_range(gamma, "gamma", 0.0, low_open=True)
    P = adiana_params(LF, muF, S.omega, S.n, gamma)
    f = S.start()
    y, z, w, h, H = S.zeros(), S.zeros(), S.zeros(), S.zeros(), S.zeros(S.m)
    coin = _Coins(S.seed, P["p"])
    a, eta, th1, th2, gam, beta = (P[k] for k in ("alpha", "eta", "theta1", "theta2",
                                                   "gamma", "beta"))
    t = 0
    while t < S.max_iter:
        t += 1
        x = th1 * z + th2 * w + (1 - th1 - th2) * y
        Gx = f.grad(x.expand(S.m, -1)) + f.grad_g(x)
        Gw = f.grad(w.expand(S.m, -1)) + f.grad_g(w)
        _, mmean = S.average(Gx - H)
        Mw, mwmean = S.average(Gw - H)
        g = h + mmean
        H = H + a * Mw
        h = h + a * mwmean
        y_new = x - eta * g
        z = beta * z + (1 - beta) * x + (gam / eta) * (y_new - x)
        if coin():
            w = y
        y = y_new
        S.bits += 2 * S.bits_round
        if not bool(torch.isfinite(y).all()):
            break
        if S.check(t, y):
            break
    return S.run("ADIANA", y, t, t, **P)
