"""SCHull as a torch-geometric transform: adds ``schull_edge_index`` to ``Data`` with ``pos``."""

from __future__ import annotations

from iclr25._checks import check_range
from iclr25._contract import checked
from iclr25._optional import require

require("torch_geometric", "graph")

from torch_geometric.data import Data  # noqa: E402
from torch_geometric.transforms import BaseTransform  # noqa: E402

from iclr25.schull.features import schull_features  # noqa: E402
from iclr25.schull.graph import schull_graph  # noqa: E402

__all__ = ["SCHull"]


@checked
class SCHull(BaseTransform):
    """Add the SCHull graph of ``data.pos`` beside the graph already there.

    Sets ``schull_edge_index`` (2, E) and ``schull_edge_attr``: the (E, 7) invariant features
    of :func:`schull_features` when ``features`` is true, else the (E, 4) chord attributes of
    :func:`schull_graph`; and ``schull_radial`` (N,). ``edge_index`` is left alone, so it
    composes with ``RadiusGraph``/``KNNGraph`` in ``Compose``. On a ``Batch`` each molecule
    gets its own hull (``data.batch``), and the ``_index`` suffix makes PyG's collate offset
    the indices when transformed ``Data`` are batched later.

    Args:
        features: store the 7 invariant features (True) or the 4 chord attributes.
        tol, merge_tol: as in :func:`schull_graph`.

    Raises:
        ValueError: ``data`` has no ``pos``; bad ``pos``/``tol``/``merge_tol``.

    Examples:
        >>> import torch
        >>> from torch_geometric.data import Data
        >>> pos = torch.randn(10, 3, generator=torch.Generator().manual_seed(0))
        >>> data = SCHull()(Data(pos=pos))
        >>> data.schull_edge_index.shape, data.schull_edge_attr.shape
        (torch.Size([2, 48]), torch.Size([48, 7]))
    """

    def __init__(self, features: bool = True, tol: float = 1e-2, merge_tol: float = 1e-6):
        check_range(tol, "tol", 0.0, low_open=True)
        check_range(merge_tol, "merge_tol", 0.0)
        self.features = bool(features)
        self.tol = float(tol)
        self.merge_tol = float(merge_tol)

    def forward(self, data: Data) -> Data:
        pos = getattr(data, "pos", None)
        if pos is None:
            raise ValueError("data must have pos (N, 3) to build its SCHull graph")
        batch = getattr(data, "batch", None)
        g = schull_graph(pos, batch, tol=self.tol, merge_tol=self.merge_tol)
        data.schull_edge_index = g.edge_index
        data.schull_edge_attr = (schull_features(pos, g.edge_index, batch, tol=self.tol)
                                 if self.features else g.edge_attr)
        data.schull_radial = g.radial
        return data

    def __repr__(self) -> str:
        return f"{type(self).__name__}(features={self.features}, tol={self.tol})"
