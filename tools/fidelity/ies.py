"""IES fixture: the released mastered-sample rule of tmllab/2025_ICLR_IES ``cifar_main.py``.

The rule's two functions are imported from the official file (``calculate_derivative``,
``correct_moving_average_new_new``); the ~15 lines of ``main()`` that keep each sample's
derivative history and select ``excluded_samples`` (lines 373-391) are inline in ``main`` and
cannot be imported, so the same rule is re-expressed below, vectorised over our arrays (not a
copy of the official text). torchvision (data loading
only) is stubbed when absent.

Inputs (seed 0): 40 samples x 14 epochs of losses ``a exp(-b t) + c + noise`` with a mix of
fast-converging, slow and noisy samples; moving_average_rate 3, k 2, threshold 1e-3 (CIFAR-10).
Outputs: per epoch, the official excluded mask and each sample's ``derivative_sum`` (NaN while
not eligible).

    python tools/fidelity/ies.py --official /path/to/2025_ICLR_IES
"""

import numpy as np
from _common import commit, parse, save, stub

args = parse(__doc__)
stub("torchvision", "torchvision.transforms", "torchvision.models")
from cifar_main import calculate_derivative, correct_moving_average_new_new  # noqa: E402

rng = np.random.default_rng(0)
n, epochs, window, k, threshold = 40, 14, 3, 2, 1e-3
t = np.arange(epochs)[None, :]
a, b = rng.uniform(0.2, 2.5, (n, 1)), rng.uniform(0.2, 2.0, (n, 1))
noise = rng.normal(0, 1, (n, epochs)) * rng.choice([0.0, 1e-4, 1e-2], (n, 1))
losses = a * np.exp(-b * t) + rng.uniform(0, 0.1, (n, 1)) + noise

history = {i: [] for i in range(n)}
derivs = {i: [] for i in range(n)}
excluded = np.zeros((epochs, n), bool)
score = np.full((epochs, n), np.nan)
for e in range(epochs):
    for i in range(n):
        history[i].append(float(losses[i, e]))
    # the rule of cifar_main.py main(), lines 373-391, re-expressed over our arrays
    for idx, ls in history.items():
        if len(ls) >= 2 + 1:
            derivs[idx].append(calculate_derivative(ls, 2))
            if len(derivs[idx]) > window + k:
                derivs[idx] = derivs[idx][-(window + k):]
    for idx, ds in derivs.items():
        if len(ds) >= window + k:
            ma = correct_moving_average_new_new(ds, window)
            score[e, idx] = np.abs(ma[-k:]).sum()
            excluded[e, idx] = score[e, idx] < threshold
print("excluded per epoch:", excluded.sum(1).tolist())
save(args.out, "ies", commit(args.official), losses=losses, excluded=excluded, score=score,
     window=window, k=k, threshold=threshold)
