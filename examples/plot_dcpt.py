"""
DCPT — Pre-train an image restorer by classifying degradations
==============================================================

DCPT (ICLR 2025) pre-trains a universal image restorer with the weakest supervision there
is: which degradation an input has (noise, blur, rain, ...). :func:`iclr25.dcpt.pretrain`
trains any image-to-image network so that a light classifier can tell the degradation from
its features; :func:`~iclr25.dcpt.finetune` then trains it for all-in-one restoration, and
:func:`~iclr25.dcpt.restore` runs it on photos of any size. The pre-trained checkpoint
keeps the classifier, so :func:`~iclr25.dcpt.classify` can tell you what is wrong with a new
photo, and restoration is then checked for that degradation: an output that the check does
not score at least a margin above its input (1 dB for noise; for blur 2 dB by the
restorer's round trip on the photo one scale down) is replaced by the input.

Here the training photos are three of scikit-image's bundled pictures, degraded on the fly
by noise, blur and rain (:class:`iclr25.datasets.images.AllInOnePairs`); a fourth picture,
never seen in training, is the test. A few dozen steps on CPU: enough to see the pipeline
work, far from the paper's budget.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import torch

from iclr25 import dcpt
from iclr25.datasets.images import AllInOnePairs, degrade, load_image

torch.manual_seed(0)
kinds = ("noise", "blur", "rain")
photos = [load_image(name, max_side=128) for name in ("astronaut", "coffee", "rocket")]
pairs = AllInOnePairs(photos, kinds, size=48, batch_size=12, seed=0)

pre = dcpt.pretrain(dcpt.UNet(width=8), pairs, n_classes=len(kinds), steps=150, lr=1e-3)
print(f"degradation accuracy during the last 10 pre-training steps: "
      f"{sum(pre.history['accuracy'][-10:]) / 10:.2f}")
tuned = dcpt.finetune(pre.model, pairs, steps=80, lr=2e-3)
# two checkpoints: the pre-trained network with its classifier (fine-tuning moves the
# features the classifier reads), and the fine-tuned restorer
folder = Path(tempfile.mkdtemp())
dcpt.save(pre.model, folder / "pretrained.safetensors", classifier=pre.classifier, kinds=kinds,
          layers=pre.layers)
dcpt.save(tuned.model, folder / "restorer.safetensors")
print(sorted(p.name for p in folder.iterdir()))

# %%
# A new photo, degraded three ways: what does the classifier say, and how much does
# restoration help (PSNR against the clean photo)?
pretrained = dcpt.load(folder / "pretrained.safetensors")
restorer = dcpt.load(folder / "restorer.safetensors").model
clean = load_image("chelsea", max_side=128)
degraded = torch.stack([degrade(clean, kind, seed=1) for kind in kinds])
# the classifier was trained on 48-pixel crops: ask it about crops of that size
probs = dcpt.classify(pretrained, degraded[..., 30:78, 40:88])
guesses = [kinds[int(p.argmax())] for p in probs]
# the checked path (what `iclr25 dcpt restore` does by default): each photo restored for the
# degradation the classifier named, scored beside the input and that kind's classical
# restorer; fallback="input" returns the input wherever the check does not score ours at
# least `margin` (without a reference 1 dB for noise; for blur 2 dB by the network's round
# trip on the photo downsampled and re-blurred by its own kernel) above it; for a kind only
# NIQE judges
# (rain, haze, ...), which cannot see a small loss, the input
restored = torch.cat([dcpt.restore(restorer, degraded[j:j + 1], degradation=guess,
                                   fallback="input") for j, guess in enumerate(guesses)])
fig, axes = plt.subplots(2, 3, figsize=(9, 6))
for j, kind in enumerate(kinds):
    guess = guesses[j]
    before = dcpt.psnr(degraded[j], clean)
    after = dcpt.psnr(restored[j], clean)
    axes[0, j].imshow(degraded[j].permute(1, 2, 0).numpy())
    axes[0, j].set_title(f"{kind} (classified: {guess})\nPSNR {before:.1f} dB", fontsize=9)
    axes[1, j].imshow(restored[j].permute(1, 2, 0).numpy())
    axes[1, j].set_title(f"restored: {after:.1f} dB", fontsize=9)
for ax in axes.flat:
    ax.set_axis_off()
fig.tight_layout()
plt.show()
