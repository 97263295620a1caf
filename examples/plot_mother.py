"""
MoTHer — Recover who was fine-tuned from whom in a folder of checkpoints
========================================================================

You have a folder of ``.safetensors`` checkpoints of one architecture, and no record of which
model was fine-tuned from which. :func:`iclr25.mother.recover_tree` reads the weights one
layer at a time and returns the model forest: undirected edges from weight distances,
directions from the kurtosis of the weights, and a minimum directed spanning forest (MoTHer,
Horwitz et al., ICLR 2025).

Here the folder is made by :func:`iclr25.mother.testbed.make_zoo`: two families of small MLPs
trained on scikit-learn's digits, each root trained from scratch and each child fine-tuned
from its parent with Adam, saved one file per model. Point ``recover_tree`` at your own
folder instead.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from iclr25 import mother
from iclr25.mother.testbed import make_zoo

folder = Path(tempfile.mkdtemp()) / "checkpoints"
zoo = make_zoo(n_trees=2, n_children=2, n_grandchildren=2, root_steps=300,
               finetune_steps=150, out_dir=folder, seed=0)
print(sorted(p.name for p in folder.glob("*.safetensors")))

# %%
# Adam fine-tuning of small MLPs raises the weights' kurtosis from parent to child, the
# paper's ``"pretrain"`` regime; two families, so ``n_trees=2``.
forest = mother.recover_tree(folder, direction="pretrain", n_trees=2)
for child, parent in forest.parents.items():
    print(f"{child:>12} <- {parent}")

# %%
# How close is it to the truth the zoo recorded?
print("directed edges right:", mother.edge_accuracy(forest.parents, zoo.parents))
print("families right:", mother.clustering_accuracy(forest.labels, zoo.truth.labels))

fig, ax = plt.subplots(figsize=(7, 4))
forest.plot(ax=ax)
ax.set_title("Recovered model forest")
plt.show()
