"""Per-instance early stopping: which training samples are mastered and can skip backprop.

The state is one tensor of recent losses per sample, shape ``(n_samples, history)``, plus a
count of how many losses each sample has recorded. Everything is vectorised over samples.
"""

from __future__ import annotations

from typing import Literal

import torch

from iclr25._checks import check_in_range, check_same_length, check_tensor

Mode = Literal["shipped", "algorithm1"]


class InstanceEarlyStopping:
    """Instance-dependent early stopping (IES): exclude samples whose loss curve has flattened.

    A sample ``i`` with loss trajectory ``L_i^(1), L_i^(2), ...`` (one loss per epoch) has
    second-order difference ``D_i^(t) = L_i^(t) - 2 L_i^(t-1) + L_i^(t-2)``. It is *mastered*
    when that curvature stays below one global threshold ``delta``:

    - ``mode="shipped"`` (default, the authors' released code): with ``a_t = |D_i^(t)|`` and
      ``m_t = mean(a_{t-window+1}, ..., a_t)``, sample ``i`` is mastered when
      ``m_t + m_{t-1} + ... + m_{t-k+1} < delta`` (``k=1``: the mean of the last ``window``
      ``|D|`` values). As in the released code a sample is eligible only once it has
      ``window + k`` second differences, i.e. ``window + k + 2`` recorded losses.
    - ``mode="algorithm1"`` (the paper's Algorithm 1, no smoothing): sample ``i`` is mastered
      when ``|D_i^(t)| < delta`` for each of its last ``patience`` second differences
      (``patience=1``: the single latest one); eligible after ``patience + 2`` losses.

    In both modes the mastered set is recomputed from scratch at every :meth:`step`, so a
    sample whose criterion fails again re-enters training. A sample that records no new loss
    keeps its old verdict; forward-evaluate excluded samples each epoch (as the paper and the
    released code do, see :func:`iclr25.ies.record_losses`) so their history continues.

    Typical loop (one loss per sample per epoch)::

        ies = InstanceEarlyStopping(len(train_set))
        for epoch in range(E):
            for x, y, idx in loader:                       # idx: dataset indices
                loss = ies.masked_loss(F.cross_entropy(model(x), y, reduction="none"), idx)
                loss.backward(); opt.step(); opt.zero_grad()
            ies.step()                                     # new active set for next epoch

    Args:
        n_samples: number of training samples (indices lie in ``[0, n_samples)``).
        delta: mastery threshold on the (smoothed) absolute second difference, ``>= 0``.
        window: moving-average window of the shipped rule (ignored by ``algorithm1``).
        mode: ``"shipped"`` or ``"algorithm1"``, see above.
        k: number of trailing moving averages summed by the shipped rule.
        patience: consecutive second differences that must be below ``delta`` in
            ``algorithm1`` mode.
        device: device of the state tensors (default CPU).

    Attributes:
        active_mask: (n_samples,) bool, samples to backpropagate in the current epoch.
        n_forward: per-sample losses recorded so far (forward passes seen by the stopper).
        n_backprop: per-sample losses that entered a backward pass through :meth:`masked_loss`.
        epochs: number of :meth:`step` calls.
        active_per_epoch: size of the active set used in each finished epoch.
        full_forward: ``True`` in ``algorithm1`` mode: the reference loop
            (:func:`iclr25.ies.train`) then forward-evaluates every sample after each epoch
            and records those losses, instead of the training-time ones.

    Paper: Yuan et al., "Instance-dependent Early Stopping", ICLR 2025: the second-order
    difference mastery criterion and Algorithm 1 (``algorithm1``); the released code
    (tmllab/2025_ICLR_IES, ``cifar_main.py``) for the smoothed rule (``shipped``).
    """

    def __init__(
        self,
        n_samples: int,
        delta: float = 1e-3,
        window: int = 3,
        *,
        mode: Mode = "shipped",
        k: int = 1,
        patience: int = 1,
        device: torch.device | str | None = None,
    ) -> None:
        if isinstance(n_samples, bool) or not isinstance(n_samples, int):
            raise TypeError(f"n_samples must be an int, got {type(n_samples).__name__}")
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        check_in_range(delta, "delta", 0.0)
        for name, v in (("window", window), ("k", k), ("patience", patience)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        if mode not in ("shipped", "algorithm1"):
            raise ValueError(f"mode must be 'shipped' or 'algorithm1', got {mode!r}")
        self.n_samples = n_samples
        self.delta = float(delta)
        self.window = window
        self.mode: Mode = mode
        self.k = k
        self.patience = patience
        self.device = torch.device(device) if device is not None else torch.device("cpu")
        # Losses kept per sample: enough to form every second difference the rule reads.
        self.history_len = (window + k + 2) if mode == "shipped" else (patience + 2)
        self.losses = torch.zeros(n_samples, self.history_len, dtype=torch.float64,
                                  device=self.device)
        self.counts = torch.zeros(n_samples, dtype=torch.long, device=self.device)
        self.active_mask = torch.ones(n_samples, dtype=torch.bool, device=self.device)
        self.n_forward = 0
        self.n_backprop = 0
        self.epochs = 0
        self.active_per_epoch: list[int] = []
        self.full_forward = mode == "algorithm1"

    # ------------------------------------------------------------------ inputs
    def _check_indices(self, indices: object, name: str = "indices", *,
                       unique: bool = False) -> torch.Tensor:
        idx = check_tensor(indices, name, ndim=1, integer=True)
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= self.n_samples:
            bad = lo if lo < 0 else hi
            raise ValueError(f"{name} must lie in [0, {self.n_samples}), got {bad}")
        if unique and torch.unique(idx).numel() != idx.numel():
            raise ValueError(f"{name} must not repeat within one call")
        return idx

    def _check_losses(self, losses: object, idx: torch.Tensor, name: str) -> torch.Tensor:
        loss = check_tensor(losses, name, ndim=1, floating=True)
        if loss.shape[0] != idx.shape[0]:
            check_same_length(**{name: loss, "indices": idx})
        return loss

    # ------------------------------------------------------------------ state
    def update(self, indices: object, losses: object) -> None:
        """Append one loss to the history of each given sample.

        Args:
            indices: (b,) integer dataset indices in ``[0, n_samples)``, no repeats.
            losses: (b,) finite per-sample losses (detached; gradients are not kept).

        Raises:
            ValueError: wrong shapes or lengths, NaN/inf losses, indices out of range or
                repeated. TypeError: non-integer indices or non-float losses.
        """
        idx = self._check_indices(indices, unique=True)
        loss = self._check_losses(losses, idx, "losses")
        idx = idx.to(self.device)
        new = loss.detach().to(device=self.device, dtype=self.losses.dtype)
        # Shift the row left by one and write the newest loss at the end.
        self.losses[idx] = torch.cat([self.losses[idx, 1:], new[:, None]], dim=1)
        self.counts[idx] += 1
        self.n_forward += int(idx.numel())

    def second_differences(self) -> torch.Tensor:
        """The stored second differences ``L^(t) - 2 L^(t-1) + L^(t-2)``, oldest first.

        Returns:
            (n_samples, history_len - 2) float64; entries a sample has not reached yet are NaN.
        """
        h = self.losses
        d2 = h[:, 2:] - 2.0 * h[:, 1:-1] + h[:, :-2]
        n_d2 = d2.shape[1]
        # Column j holds a valid difference once the sample has n_d2 - j + 2 losses.
        have = (self.counts - 2).clamp(min=0)[:, None]
        valid = torch.arange(n_d2, device=self.device)[None, :] >= (n_d2 - have)
        return torch.where(valid, d2, torch.full_like(d2, float("nan")))

    def scores(self) -> torch.Tensor:
        """The quantity compared with ``delta`` for each sample (NaN while not yet eligible).

        Returns:
            (n_samples,) float64: the summed moving means of ``|D|`` (shipped) or the largest
            of the last ``patience`` ``|D|`` (algorithm1).
        """
        a = self.second_differences().abs()
        if self.mode == "shipped":
            ma = a.unfold(1, self.window, 1).mean(-1)  # (n, k + 1) moving means
            return ma[:, -self.k:].sum(1)
        return a.amax(1)

    def mastered(self) -> torch.Tensor:
        """(n_samples,) bool: samples whose criterion holds now (NaN scores never hold)."""
        eligible = self.counts >= self.history_len
        return eligible & (self.scores() < self.delta)

    def step(self) -> torch.Tensor:
        """End an epoch: recompute the mastered set from scratch; return the new active indices.

        Returns:
            (n_active,) int64 indices, sorted, of the samples to train in the next epoch.
        """
        self.active_per_epoch.append(int(self.active_mask.sum()))
        self.epochs += 1
        self.active_mask = ~self.mastered()
        return self.active_indices

    # ------------------------------------------------------------------ views
    @property
    def active_indices(self) -> torch.Tensor:
        """(n_active,) int64 sorted indices of samples still trained."""
        return torch.nonzero(self.active_mask).flatten()

    @property
    def excluded_indices(self) -> torch.Tensor:
        """(n_excluded,) int64 sorted indices of mastered samples (forward-only this epoch)."""
        return torch.nonzero(~self.active_mask).flatten()

    @property
    def saved_fraction(self) -> float:
        """Share of sample-epochs excluded so far: ``sum_t |excluded_t| / (n_samples * epochs)``.

        This is the paper's "saved ratio" of backpropagated instances.
        """
        if self.epochs == 0:
            return 0.0
        return 1.0 - sum(self.active_per_epoch) / (self.n_samples * self.epochs)

    # ------------------------------------------------------------------ loss
    def masked_loss(
        self, loss_per_sample: torch.Tensor, indices: object, *, record: bool = True
    ) -> torch.Tensor:
        """Mean loss over the batch's active samples; mastered samples get no gradient.

        Args:
            loss_per_sample: (b,) per-sample losses with their graph (``reduction="none"``).
            indices: (b,) dataset indices of the batch, no repeats.
            record: also append the (detached) losses to the history, as the released code
                does during training. Use ``False`` when losses are recorded elsewhere.

        Returns:
            Scalar: ``sum_{i active} loss_i / n_active`` (the released code normalises by the
            number of active samples in the batch); a zero with the graph if none is active.

        Side effects: adds the number of active samples to ``n_backprop``.
        """
        idx = self._check_indices(indices, unique=True)
        loss = self._check_losses(loss_per_sample, idx, "loss_per_sample")
        if record:
            self.update(idx, loss)
        mask = self.active_mask[idx.to(self.device)].to(loss.device)
        n_active = int(mask.sum())
        self.n_backprop += n_active
        weights = mask.to(loss.dtype)
        return (loss * weights).sum() / max(n_active, 1)

    def state_dict(self) -> dict[str, object]:
        """Everything needed to resume: histories, counts, active mask and counters."""
        return {
            "losses": self.losses.clone(), "counts": self.counts.clone(),
            "active_mask": self.active_mask.clone(), "n_forward": self.n_forward,
            "n_backprop": self.n_backprop, "epochs": self.epochs,
            "active_per_epoch": list(self.active_per_epoch),
        }

    def load_state_dict(self, state: dict[str, object]) -> None:
        """Restore a :meth:`state_dict` taken from a stopper with the same settings."""
        losses = check_tensor(state["losses"], "state['losses']", ndim=2, floating=True)
        if tuple(losses.shape) != tuple(self.losses.shape):
            raise ValueError(f"state['losses'] must have shape {tuple(self.losses.shape)}, got "
                             f"{tuple(losses.shape)}")
        counts = check_tensor(state["counts"], "state['counts']", ndim=1, integer=True)
        active = check_tensor(state["active_mask"], "state['active_mask']", ndim=1)
        for key, t in (("counts", counts), ("active_mask", active)):
            if len(t) != self.n_samples:
                raise ValueError(f"state[{key!r}] must have length {self.n_samples}, got {len(t)}")
        self.losses = losses.to(self.losses).clone()
        self.counts = counts.to(self.counts).clone()
        self.active_mask = active.to(self.active_mask).clone()
        self.n_forward = int(state["n_forward"])  # type: ignore[arg-type]
        self.n_backprop = int(state["n_backprop"])  # type: ignore[arg-type]
        self.epochs = int(state["epochs"])  # type: ignore[arg-type]
        self.active_per_epoch = list(state["active_per_epoch"])  # type: ignore[call-overload]

    def __repr__(self) -> str:
        return (f"InstanceEarlyStopping(n_samples={self.n_samples}, delta={self.delta:g}, "
                f"window={self.window}, mode={self.mode!r}, active={int(self.active_mask.sum())},"
                f" epochs={self.epochs})")


class LossThresholdStopping(InstanceEarlyStopping):
    """Baseline: exclude samples whose latest recorded loss is below ``threshold``.

    The "small loss" removal the IES paper compares with; the set is recomputed every
    :meth:`step` like IES, with the same counters and the same :meth:`masked_loss`.

    Args:
        n_samples: number of training samples.
        threshold: a sample with latest loss ``< threshold`` is excluded, ``>= 0``.
        device: device of the state tensors.
    """

    def __init__(self, n_samples: int, threshold: float = 1e-2, *,
                 device: torch.device | str | None = None) -> None:
        check_in_range(threshold, "threshold", 0.0)
        super().__init__(n_samples, delta=threshold, window=1, mode="algorithm1", patience=1,
                         device=device)
        self.threshold = float(threshold)
        self.full_forward = False
        self.history_len = 1
        self.losses = self.losses[:, :1].clone()

    def second_differences(self) -> torch.Tensor:
        raise NotImplementedError("LossThresholdStopping looks at losses, not their curvature")

    def scores(self) -> torch.Tensor:
        last = self.losses[:, -1]
        return torch.where(self.counts >= 1, last, torch.full_like(last, float("nan")))

    def __repr__(self) -> str:
        return (f"LossThresholdStopping(n_samples={self.n_samples}, "
                f"threshold={self.threshold:g}, active={int(self.active_mask.sum())})")
