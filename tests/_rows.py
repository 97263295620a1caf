"""A map-style Dataset over in-memory items, read one by one as from disk (the streaming tests)."""

from torch.utils.data import Dataset


class Rows(Dataset):
    """``X``'s items by index; ``bad``: {index: item} served instead (a broken row)."""

    def __init__(self, X, bad=None):
        self.X, self.bad = X, bad or {}

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        return self.bad.get(i, self.X[i])
