"""
Low-light — Brighten and denoise a dark photo with no reference image
=====================================================================

Real low-light photos are dark, noisy and unevenly lit, and nobody has the well-lit version
to train on. The zero-reference method of ICLR 2025 trains a Retinex network (noise,
illumination and reflectance branches, with a DCT frequency prior) on the dark photos alone,
from pairs of sub-images that share content but not noise.
:class:`iclr25.lowlight.ZeroReferenceEnhancer` wraps it scikit-learn style: ``fit`` on dark
images, ``transform`` to enhance; ``method="zero_dce"`` gives the Zero-DCE baseline.

Here the dark photo is scikit-image's coffee cup, darkened and given shot noise the way an
underexposed sensor would, saved as a PNG and read back. The clean photo is used only to score.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
from skimage import data, io, transform

from iclr25 import lowlight

rng = np.random.default_rng(0)
clean = transform.rescale(data.coffee(), 0.4, channel_axis=2, anti_aliasing=True)
photons = rng.poisson(clean**2.2 * 0.15 * 400) / 400                # dim light, shot noise
dark = np.clip(photons ** (1 / 2.2), 0, 1)
path = Path(tempfile.mkdtemp()) / "dark.png"
io.imsave(path, (dark * 255).astype(np.uint8))

image = torch.tensor(io.imread(path) / 255.0, dtype=torch.float32).permute(2, 0, 1)[None]
reference = torch.tensor(clean, dtype=torch.float32).permute(2, 0, 1)[None]
results = {"dark input": image}
for method in ("retinex", "zero_dce"):
    # a short CPU schedule (the paper trains for 100 epochs at Adam 1e-5)
    est = lowlight.ZeroReferenceEnhancer(method=method, width=16, steps=100, crop=48,
                                         batch_size=2, lr=1e-3, seed=0).fit(image)
    # the networks' own outputs, compared (by default transform checks each output and
    # returns the input where the check scores ours below it)
    results[method] = est.transform(image, check=False)
for name, out in results.items():
    print(f"{name}: PSNR {lowlight.psnr(out, reference):.2f} dB, "
          f"SSIM {lowlight.ssim(out, reference):.3f}")

# %%
fig, axes = plt.subplots(1, 4, figsize=(12, 3))
titles = {"dark input": "dark input", "retinex": "zero-reference Retinex (ours)",
          "zero_dce": "Zero-DCE baseline"}
for ax, (name, out) in zip(axes, results.items(), strict=False):
    ax.imshow(out[0].permute(1, 2, 0).clamp(0, 1).numpy())
    ax.set_title(titles[name], fontsize=9)
axes[3].imshow(clean)
axes[3].set_title("well-lit photo (for scoring only)", fontsize=9)
for ax in axes:
    ax.set_axis_off()
plt.show()
