"""Seeded model zoos with a known family tree, for tests, claims and benchmarks.

``make_zoo`` trains trees of small MLPs on scikit-learn's bundled digits: each root is
trained from its own random init, each child is fine-tuned from its parent with Adam on a
new task (a new random grouping of the ten digits into classes, a new random subset of the
images, and a freshly initialised head). All models of one generation are trained at once
as a batch of independent networks (batched matmuls, elementwise Adam), so a 105-model zoo
takes seconds. ``make_lora_zoo`` builds LoRA-style trees: child = parent + a rank-r update.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from iclr25._checks import check_int, check_range, resolve_seed
from iclr25._io import read_json
from iclr25._progress import progress_bar
from iclr25._threads import torch_threads
from iclr25._train import fit_minibatch
from iclr25.datasets import digits
from iclr25.mother.tree import ModelForest


@dataclass
class Zoo:
    """A generated zoo: the models and their true family tree.

    Attributes:
        models: ``{name: state dict}`` (CPU float32 tensors), in generation order.
        parents: the truth, ``{name: parent name or None}``.
        directory: where the models were saved as ``<name>.safetensors`` (with
            ``tree.json`` holding the truth), or ``None``.
    """

    models: dict[str, dict[str, torch.Tensor]]
    parents: dict[str, str | None]
    directory: Path | None = None

    @property
    def truth(self) -> ModelForest:
        return ModelForest.from_parents(self.parents)

    @property
    def names(self) -> list[str]:
        return list(self.models)

    def save(self, directory: str | Path) -> Path:
        """Write each model as ``<name>.safetensors`` and the truth as ``tree.json``."""
        from safetensors.torch import save_file

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for name, sd in self.models.items():
            save_file({k: v.contiguous() for k, v in sd.items()},
                      str(directory / f"{name}.safetensors"))
        (directory / "tree.json").write_text(json.dumps({"parents": self.parents}, indent=2))
        self.directory = directory
        return directory


def _names(n_trees: int, fans: tuple[int, ...]) -> list[tuple[str, str | None]]:
    """(name, parent) in generation order: the official VTHR naming ``r-i-j`` (X = none),
    with one index per generation, ``r-i-j-k-...`` for deeper trees."""
    def name(path: tuple[int, ...]) -> str:
        return "-".join([str(i) for i in path] + ["X"] * (len(fans) + 1 - len(path)))

    level = [(r,) for r in range(n_trees)]
    out: list[tuple[str, str | None]] = [(name(p), None) for p in level]
    for fan in fans:
        level = [(*p, j) for p in level for j in range(fan)]
        out += [(name(p), name(p[:-1])) for p in level]
    return out


def _uniform(shape: tuple[int, ...], fan_in: int, g: torch.Generator) -> torch.Tensor:
    # nn.Linear's default init range
    return (torch.rand(shape, generator=g) * 2 - 1) / fan_in**0.5


class _BatchedMLP(torch.nn.Module):
    """B independent ReLU MLPs evaluated at once with batched matmuls.

    ``forward`` takes (B, bs, d) inputs (one batch per model) and returns (B, bs, k) logits.
    """

    def __init__(self, params: list[torch.Tensor]) -> None:
        super().__init__()
        # [W1 (B, h, d), b1 (B, h), ..., Wout (B, k, h), bout (B, k)], copied
        self.ps = torch.nn.ParameterList([torch.nn.Parameter(p.detach().clone())
                                          for p in params])

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        ps = list(self.ps)
        for li in range(0, len(ps) - 2, 2):
            h = torch.relu(torch.baddbmm(ps[li + 1][:, None, :], h, ps[li].transpose(1, 2)))
        return torch.baddbmm(ps[-1][:, None, :], h, ps[-2].transpose(1, 2))


def _train_batch(
    params: list[torch.Tensor], X: torch.Tensor, task: tuple[torch.Tensor, torch.Tensor],
    recipe: tuple[int, float, int], g: torch.Generator,
    advance: Callable[[], Any] = lambda: None,
) -> list[torch.Tensor]:
    """Train B independent MLPs at once with Adam through the shared minibatch loop
    (``advance()`` after each step: the zoo's progress bar).

    Each of the ``steps`` batches is a (B, batch_size) index tensor: model b's samples,
    drawn with replacement from its ``subsets[b]``. The loss is the sum over models of each
    model's mean cross-entropy, so the models' gradients stay independent.

    Args:
        params: [W1 (B, h, d), b1 (B, h), ..., Wout (B, k, h), bout (B, k)], copied.
        X: (n, d) inputs.
        task: (Y, subsets) from :func:`_tasks`: (B, n) per-model labels, and (B, m) allowed
            sample indices.
        recipe: (steps, Adam's lr, batch size).

    Returns:
        the trained parameters (detached).
    """
    Y, subsets = task
    steps, lr, batch_size = recipe
    model = _BatchedMLP(params)
    B, m = subsets.shape
    rows = torch.arange(B, device=X.device)[:, None]

    def batches(epoch: int) -> Iterator[torch.Tensor]:
        # drawn on the CPU generator: the same minibatches on every device
        for _ in range(steps):
            yield subsets[rows.cpu(), torch.randint(0, m, (B, batch_size), generator=g)].to(
                X.device)
            advance()

    def loss_fn(logits: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        # y is the sample index itself: each model reads its own labels Y[b, idx[b]]
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), Y[rows, idx].flatten(),
                                                 reduction="sum") / batch_size

    # these matmuls are tiny: intra-op threads only add synchronisation (10x slower on a
    # busy machine), so train single-threaded and restore the caller's setting afterwards
    with torch_threads(1):
        fit_minibatch(model, loss_fn, X, torch.arange(len(X), device=X.device), epochs=1,
                      batch_size=batch_size, optimizer=torch.optim.Adam(model.parameters(), lr=lr),
                      seed=g, batches=batches)
    return [p.detach() for p in model.ps]


def _tasks(B: int, n_classes: int, m: int, g: torch.Generator) -> tuple[torch.Tensor, ...]:
    """B random tasks on digits: labels (B, n) of a digit-to-class map, and index subsets."""
    y = digits(seed=0).y_train
    n = len(y)
    # every digit-to-class map hits each class at least once (first n_classes digits
    # of a random permutation go to distinct classes)
    perm = torch.argsort(torch.rand(B, 10, generator=g), dim=1)
    cls = torch.randint(0, n_classes, (B, 10), generator=g)
    cls[:, :n_classes] = torch.arange(n_classes)
    mapping = torch.empty(B, 10, dtype=torch.long).scatter_(1, perm, cls)
    subsets = torch.argsort(torch.rand(B, n, generator=g), dim=1)[:, :m]
    return mapping[:, y], subsets


def _init(B: int, dims: list[int], g: torch.Generator) -> list[torch.Tensor]:
    """nn.Linear-style init of B stacked MLP bodies with widths ``dims``."""
    body = []
    for a, b in zip(dims[:-1], dims[1:], strict=True):
        body += [_uniform((B, b, a), a, g), _uniform((B, b), a, g)]
    return body


def _assemble(gens: list[list[torch.Tensor]], depth: int,
              order: list[tuple[str, str | None]]) -> Zoo:
    """A Zoo of one state dict per model from the stacked parameters of each generation."""
    keys = [f"fc{i + 1}.{w}" for i in range(depth) for w in ("weight", "bias")]
    keys += ["head.weight", "head.bias"]
    flat = [[p[i].cpu().clone() for p in gen] for gen in gens
            for i in range(gen[0].shape[0])]
    order = order[: len(flat)]
    return Zoo({name: dict(zip(keys, ps, strict=True))
                for (name, _), ps in zip(order, flat, strict=True)}, dict(order))


def _check_fans(n_children: int | None, n_grandchildren: int | None,
                fans: object) -> tuple[int, ...]:
    """The per-generation fan-outs: ``fans``, or ``(n_children, n_grandchildren)``."""
    if fans is None:
        return (check_int(4 if n_children is None else n_children, "n_children", 0),
                check_int(4 if n_grandchildren is None else n_grandchildren,
                          "n_grandchildren", 0))
    if n_children is not None or n_grandchildren is not None:
        raise ValueError("give either fans or n_children/n_grandchildren, not both")
    if isinstance(fans, (str, bytes)) or not hasattr(fans, "__iter__"):
        raise TypeError(f"fans must be a sequence of ints, got {type(fans).__name__}")
    return tuple(check_int(f, "fans", 0) for f in fans)


def make_zoo(
    n_trees: int = 5, n_children: int | None = None, n_grandchildren: int | None = None, *,
    fans: Sequence[int] | None = None, width: int = 64, depth: int = 3, n_classes: int = 4,
    root_steps: int = 1500, finetune_steps: int = 500, root_lr: float = 3e-3,
    finetune_lr: float = 1e-3, batch_size: int = 64, subset: float = 0.7,
    out_dir: str | Path | None = None, seed: int | torch.Generator | None = 0,
    device: torch.device | str | None = None, verbose: bool | None = None,
) -> Zoo:
    """Trees of small MLPs trained on sklearn digits, each child fine-tuned from its parent.

    Every tree has 1 root, ``n_children`` children and ``n_children * n_grandchildren``
    grandchildren (default 4 and 4: the paper's VTHR layout 1 + 4 + 16), or, with ``fans``,
    one generation per entry, each node of generation ``g`` having ``fans[g]`` children
    (``fans=(1, 1, 2, 1, 2)``: a chain that branches twice). Each model has its own task: the
    ten digits grouped at random into ``n_classes`` classes, on a random ``subset`` of the
    training images, with a new head. Roots: random init, Adam ``root_lr`` for
    ``root_steps``; others: Adam ``finetune_lr`` for ``finetune_steps`` from the parent.

    Args:
        width, depth: ``depth`` hidden layers of ``width`` units (64 -> width -> ... -> k).
            The hidden ``width x width`` matrices (and the input one if width == 64) are the
            square layers MoTHer uses.
        fans: fan-out per generation (instead of ``n_children``, ``n_grandchildren``).
        out_dir: if given, save the zoo there (``<name>.safetensors`` + ``tree.json``).
        seed: seed (int or Generator) of the inits, tasks and minibatches, all drawn on the
            CPU, so a seed gives the same draws on every device.
        device: where the models train (the returned state dicts are on the CPU).
        verbose: a progress bar over the training steps (None: on a terminal only).

    Returns:
        Zoo with state dicts named ``fc1.weight, fc1.bias, ..., head.weight, head.bias``.

    Raises:
        TypeError / ValueError naming the argument, before any training.
    """
    fans = _check_fans(n_children, n_grandchildren, fans)
    for name, v in (("n_trees", n_trees), ("width", width), ("depth", depth)):
        check_int(v, name, 1)
    check_int(n_classes, "n_classes", 2, 10)
    for name, v in (("root_steps", root_steps), ("finetune_steps", finetune_steps)):
        check_int(v, name, 1)
    for name, v in (("root_lr", root_lr), ("finetune_lr", finetune_lr)):
        check_range(v, name, 0.0, low_open=True)
    check_int(batch_size, "batch_size", 1)
    check_range(subset, "subset", 0.0, 1.0, low_open=True)
    g, X = resolve_seed(seed), digits(seed=0, device=device).X_train
    task = _Tasks(X, g, n_classes, width, max(batch_size, int(subset * len(X))), batch_size)
    init = _init(n_trees, [X.shape[1]] + [width] * depth, g)
    with progress_bar(root_steps + (_generations(n_trees, fans) - 1) * finetune_steps,
                      "training the zoo", verbose=verbose) as advance:
        gens = [task.train([p.to(X.device) for p in init], root_steps, root_lr, advance)]
        for fan in fans:
            if gens[-1][0].shape[0] * fan == 0:
                break
            gens.append(task.train([p.repeat_interleave(fan, dim=0) for p in gens[-1][:-2]],
                                   finetune_steps, finetune_lr, advance))
    zoo = _assemble(gens, depth, _names(n_trees, fans))
    if out_dir is not None:
        zoo.save(out_dir)
    return zoo


@dataclass(frozen=True)
class _Tasks:
    """How :func:`make_zoo` trains a generation: on digits ``X`` (drawing from ``g``), each
    model on its own task of ``n_classes`` classes over ``m`` training images, with a new
    head on the ``width``-unit body, in batches of ``batch_size``."""

    X: torch.Tensor
    g: torch.Generator
    n_classes: int
    width: int
    m: int
    batch_size: int

    def train(self, body: list[torch.Tensor], steps: int, lr: float,
              advance: Callable[[], Any]) -> list[torch.Tensor]:
        """The B stacked bodies ``body``, each with a new task and head, trained by Adam."""
        X, g, k, width = self.X, self.g, self.n_classes, self.width
        B = body[0].shape[0]
        Y, sub = _tasks(B, k, self.m, g)
        head = [_uniform((B, k, width), width, g), _uniform((B, k), width, g)]
        return _train_batch(body + [h.to(X.device) for h in head], X, (Y.to(X.device), sub),
                            (steps, lr, self.batch_size), g, advance)


def _generations(n_trees: int, fans: tuple[int, ...]) -> int:
    """Generations that hold models: training stops at the first empty one."""
    n_gens, size = 1, n_trees
    for fan in fans:
        if size * fan == 0:
            break
        n_gens, size = n_gens + 1, size * fan
    return n_gens


def make_lora_zoo(
    n_trees: int = 2,
    n_children: int = 3,
    n_grandchildren: int = 2,
    *,
    dim: int = 48,
    n_layers: int = 2,
    ranks: tuple[int, ...] = (4, 8, 16),
    seed: int | torch.Generator | None = 0,
) -> Zoo:
    """LoRA-style trees: every child is its parent plus a merged random rank-r update.

    Each child draws ``r`` from ``ranks`` and adds ``B @ A`` (``B`` (dim, r), ``A`` (r, dim),
    Gaussian, scaled to the root's weight scale) to every ``layer{l}.value.weight``.

    Returns:
        Zoo whose state dicts hold ``n_layers`` square (dim, dim) ``value`` matrices and a
        1-D bias each (the bias is ignored by the rank distance).
    """
    check_int(n_trees, "n_trees", 1)
    check_int(n_children, "n_children", 0)
    check_int(n_grandchildren, "n_grandchildren", 0)
    dim = check_int(dim, "dim", 1)
    check_int(n_layers, "n_layers", 1)
    if not ranks:
        raise ValueError("ranks must not be empty")
    ranks = tuple(check_int(r, "ranks", 1, dim) for r in ranks)
    g = resolve_seed(seed)
    order = _names(n_trees, (n_children, n_grandchildren))
    models: dict[str, dict[str, torch.Tensor]] = {}
    for name, parent in order:
        if parent is None:
            sd = {}
            for li in range(n_layers):
                sd[f"layer{li}.value.weight"] = torch.randn(dim, dim, generator=g) / dim**0.5
                sd[f"layer{li}.value.bias"] = torch.zeros(dim)
        else:
            r = ranks[int(torch.randint(0, len(ranks), (1,), generator=g))]
            sd = {}
            for k, v in models[parent].items():
                if v.ndim == 2:
                    B = torch.randn(dim, r, generator=g) / dim**0.5
                    A = torch.randn(r, dim, generator=g) / r**0.5
                    v = v + B @ A
                sd[k] = v.clone()
        models[name] = sd
    return Zoo(models, dict(order))


def load_truth(directory: str | Path) -> ModelForest:
    """The true forest saved by ``Zoo.save`` (``tree.json``)."""
    path = Path(directory) / "tree.json"
    if not path.exists():
        raise ValueError(f"no tree.json in {str(directory)!r}")
    parents = read_json(path, "tree.json", required=("parents",))["parents"]
    if not isinstance(parents, dict):
        raise ValueError(f"tree.json {path}: 'parents' must map each model to its parent, got "
                         f"a {type(parents).__name__}")
    return ModelForest.from_parents(parents)
