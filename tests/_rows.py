"""A map-style Dataset over in-memory items, read one by one as from disk, and the folder
``datasets.Dataset.save_to_disk`` writes (the streaming tests)."""

import json

import numpy as np
from torch.utils.data import Dataset


class Rows(Dataset):
    """``X``'s items by index; ``bad``: {index: item} served instead (a broken row)."""

    def __init__(self, X, bad=None):
        self.X, self.bad = X, bad or {}

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        return self.bad.get(i, self.X[i])


def save_to_disk_layout(path, table, shards=3):
    """Write pyarrow ``table`` as ``datasets.Dataset.save_to_disk`` lays it out (``shards``
    Arrow stream files and a ``state.json`` naming them) into the new folder ``path``,
    without ``datasets``; returns ``path``."""
    import pyarrow as pa

    path.mkdir()
    files = []
    for i, part in enumerate(np.array_split(np.arange(table.num_rows), shards)):
        name = f"data-{i:05d}-of-{shards:05d}.arrow"
        with pa.ipc.new_stream(path / name, table.schema) as w:
            w.write_table(table.take(part))
        files.append({"filename": name})
    (path / "state.json").write_text(json.dumps({"_data_files": files}))
    return path
