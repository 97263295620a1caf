"""Digits seen through two known (IM) modalities and one unknown (OOM) sensor (notes Sec. 4.5).

IM-A = PCA(32) of the 8x8 image, IM-B = the 4x4-pooled image (16-d); each gets an MLP encoder
trained on all IM training rows with a CLIP loss (A <-> B) plus supervised heads, then frozen:
one 64-d aligned space standing in for ImageBind. OOM = ``random_sensor(64, 64)`` of the
permuted pixels.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F

from iclr25._train import seeded_mlp
from iclr25.datasets.views import digit_images, permute_features, random_sensor


class DigitModalities(NamedTuple):
    """Train/test rows of one instance set; IM rows shuffled apart from OOM rows."""

    im_train: dict[str, torch.Tensor]   # frozen IM embeddings (n_im, 64), rows = im_order
    y_im: torch.Tensor                  # (n_im,) IM labels
    im_order: torch.Tensor              # im row r is instance im_order[r]
    X_oom: torch.Tensor                 # (n, 64) OOM train inputs (instance order)
    y_oom: torch.Tensor                 # (n,) true OOM train labels (for scoring only)
    X_oom_test: torch.Tensor
    y_oom_test: torch.Tensor


def _pca(X: torch.Tensor, k: int, ref: torch.Tensor) -> torch.Tensor:
    mu = ref.mean(0)
    _, _, V = torch.linalg.svd(ref - mu, full_matrices=False)
    return (X - mu) @ V[:k].T


def digit_modalities(seed: int = 0, *, im_steps: int = 300) -> DigitModalities:
    """Build the setting from the ``digits`` split with ``seed``."""
    split = digit_images(8, seed)
    g = torch.Generator().manual_seed(seed)
    flat_tr, flat_te = split.X_train.reshape(-1, 64), split.X_test.reshape(-1, 64)
    a = _pca(flat_tr, 32, flat_tr)
    b = F.avg_pool2d(split.X_train[:, None], 2).reshape(len(flat_tr), 16)
    enc = {"a": seeded_mlp([32, 128, 64], seed=1000 * seed + 1),
           "b": seeded_mlp([16, 128, 64], seed=1000 * seed + 2)}
    heads = {m: seeded_mlp([64, 10], seed=1000 * seed + 3 + i) for i, m in enumerate(enc)}
    params = [p for m in enc for p in (*enc[m].parameters(), *heads[m].parameters())]
    opt = torch.optim.Adam(params, lr=1e-3)
    y = split.y_train
    inp = {"a": a, "b": b}
    for _ in range(im_steps):
        idx = torch.randint(0, len(y), (256,), generator=g)
        za, zb = (F.normalize(enc[m](inp[m][idx]), dim=1) for m in ("a", "b"))
        logits = za @ zb.T / 0.1
        t = torch.arange(len(idx))
        loss = (F.cross_entropy(logits, t) + F.cross_entropy(logits.T, t)) / 2
        loss = loss + sum(F.cross_entropy(heads[m](z), y[idx]) for m, z in (("a", za), ("b", zb)))
        opt.zero_grad()
        loss.backward()
        opt.step()
    order = torch.randperm(len(y), generator=g)
    with torch.no_grad():
        im = {m: F.normalize(enc[m](inp[m]), dim=1)[order] for m in enc}
    perm_tr, perm = permute_features(flat_tr, seed)
    sensor = random_sensor(64, 64, seed=seed)
    with torch.no_grad():
        X_tr = sensor(perm_tr, seed=seed + 1)
        X_te = sensor(flat_te[:, perm], seed=seed + 2)
    return DigitModalities(im, y[order], order, X_tr, y, X_te, split.y_test)


def semi_supervised_split(data: DigitModalities, rate: float = 0.1, seed: int = 0
                          ) -> tuple[torch.Tensor, torch.Tensor]:
    """Stratified ``rate`` of OOM train rows get a label and a pair to their IM row.

    Returns:
        ``(pairs (P, 2) (im_row, oom_row), y_oom (n,) with -1 for unlabelled)``.
    """
    from sklearn.model_selection import train_test_split

    n, dev = len(data.y_oom), data.y_oom.device
    lab, _ = train_test_split(torch.arange(n).numpy(), train_size=rate, random_state=seed,
                              stratify=data.y_oom.cpu().numpy())
    lab = torch.as_tensor(lab, device=dev).sort().values
    inv = torch.empty_like(data.im_order)
    inv[data.im_order] = torch.arange(n, device=dev)
    pairs = torch.stack([inv[lab], lab], 1)
    y = torch.full((n,), -1, dtype=torch.long, device=dev)
    y[lab] = data.y_oom[lab]
    return pairs, y
