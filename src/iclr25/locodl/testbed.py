"""Data of LoCoDL's claims and tests: breast cancer split by label, and the notes' config 1."""

from __future__ import annotations

import numpy as np
import torch

from iclr25.locodl.objectives import ClientLogistic


def label_split(y: np.ndarray, n_clients: int) -> np.ndarray:
    """Client ids: rows sorted by label, cut into n contiguous near-equal blocks (heterogeneous
    clients: most hold one class only)."""
    order = np.argsort(y, kind="stable")
    ids = np.empty(len(y), dtype=np.int64)
    ids[order] = np.arange(len(y)) * n_clients // len(y)
    return ids


def alpha_for_kappa(X: np.ndarray, clients: np.ndarray, kappa: float) -> float:
    """α with κ = L/μ_f = kappa, μ_f = α/2, L = max_i n λ_max(A_iᵀA_i)/(4N) + μ_f."""
    n, N = int(clients.max()) + 1, len(X)
    lam = max(np.linalg.eigvalsh(X[clients == i].T @ X[clients == i])[-1] for i in range(n))
    Ld = lam * n / (4 * N)
    return 2 * Ld / (kappa - 1)


def breast_cancer(n_clients: int = 10, kappa: float = 1e3,
                  dtype: torch.dtype = torch.float64,
                  device: torch.device | str = "cpu") -> ClientLogistic:
    """load_breast_cancer standardised (569 × 30), split by sorted label, α set for κ."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    c = label_split(y, n_clients)
    a = alpha_for_kappa(X, c, kappa)
    return ClientLogistic(torch.as_tensor(X, dtype=dtype, device=device),
                          torch.as_tensor(y, device=device), torch.as_tensor(c, device=device),
                          alpha=a)


def synthetic_config1(seed: int = 0, n: int = 50, d: int = 50, m: int = 20,
                      mu: float = 1e-3) -> ClientLogistic:
    """The notes' §1.5 config 1: A_i = N(0,1)^{m×d} + a client shift N(0,1)^d, b = ±1 at
    random, α = 2μ (f_i and g each carry μ/2)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, m, d)) + rng.normal(size=(n, 1, d))
    b = rng.integers(0, 2, size=(n, m))
    c = np.repeat(np.arange(n), m)
    return ClientLogistic(torch.as_tensor(A.reshape(n * m, d)), torch.as_tensor(b.reshape(-1)),
                          torch.as_tensor(c), alpha=2 * mu)
