"""LOS re-training through the engine: a Dataset of features, DDP, resume, the run's options."""

import pytest
import torch
from torch import nn
from torch.utils.data import Dataset

from iclr25.los import RetrainedClassifier, retrain_classifier

pytest.importorskip("lightning_fabric")


def _data(n=240, d=6, K=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(K).repeat_interleave(torch.tensor([n // 2, n // 4, n // 8, n // 8]))
    X = (2 * torch.randn(K, d, generator=g))[y] + torch.randn(len(y), d, generator=g)
    head = nn.Linear(d, K)
    with torch.no_grad():
        head.weight.copy_(torch.randn(K, d, generator=g) * 0.1)
        head.bias.zero_()
    return X, y, head


class Rows(Dataset):
    """Features read row by row, as from disk; ``fail_after`` reads, it raises (a crash)."""

    def __init__(self, X, y, fail_after=None):
        self.X, self.y, self.reads, self.fail_after = X, y, 0, fail_after

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        self.reads += 1
        if self.fail_after is not None and self.reads > self.fail_after:
            raise RuntimeError("disk went away")
        return self.X[i], self.y[i]


@pytest.mark.parametrize("method", ["los", "lws"])     # lws: class-balanced batches
def test_dataset_gives_the_head_of_in_memory_features(one_thread, method):
    X, y, init = _data()
    a = retrain_classifier(X, y, method, init=init, epochs=3, seed=2)
    b = retrain_classifier(Rows(X, y), None, method, init=init, epochs=3, seed=2)
    assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
    clf = RetrainedClassifier(method, init=init, epochs=3, seed=2).fit(Rows(X, y))
    assert torch.equal(clf.head_.weight, a.weight)
    assert clf.class_counts_.tolist() == torch.bincount(y).tolist()


def test_two_processes_give_the_one_process_head(one_thread):
    X, y, init = _data()
    a = retrain_classifier(X, y, "lws", init=init, epochs=2, seed=1)
    b = retrain_classifier(X, y, "lws", init=init, epochs=2, seed=1, devices=2)
    torch.testing.assert_close(a.weight, b.weight, rtol=0, atol=1e-5)


def test_a_crashed_run_resumed_equals_the_whole_run(one_thread, tmp_path):
    # 240 rows in batches of 64: 4 steps per epoch; the labels pass reads 240 rows, then
    # the run dies reading step 6's rows, after its checkpoint at step 3 (mid-epoch)
    X, y, init = _data()
    whole = retrain_classifier(X, y, "los", init=init, epochs=4, seed=3)
    ckpt = tmp_path / "los.ckpt"
    with pytest.raises(RuntimeError, match="disk went away"):
        retrain_classifier(Rows(X, y, fail_after=240 + 5 * 64), None, "los", init=init,
                           epochs=4, seed=3, checkpoint=ckpt, checkpoint_every=3)
    resumed = retrain_classifier(Rows(X, y), None, "los", init=init, epochs=4, seed=3,
                                 resume=ckpt)
    assert torch.equal(whole.weight, resumed.weight) and torch.equal(whole.bias, resumed.bias)


def test_bad_run_options_and_datasets_are_refused_before_work(tmp_path):
    X, y, init = _data()
    with pytest.raises(ValueError, match="devices=999 but this machine has"):
        retrain_classifier(X, y, init="logistic", devices=999)
    with pytest.raises(ValueError, match="init='logistic' fits on all features in memory"):
        retrain_classifier(Rows(X, y), None)
    with pytest.raises(ValueError, match="y must be None"):
        retrain_classifier(Rows(X, y), y, init=init)
    with pytest.raises(TypeError, match=r"\(feature, label\) pairs"):
        retrain_classifier(Rows(X.long(), y), None, init=init)
    ckpt = tmp_path / "small.ckpt"
    retrain_classifier(X[:, :3], y, init=nn.Linear(3, 4), epochs=1, checkpoint=ckpt)
    # another dataset (3 of the 6 columns) is named first: its fingerprint is checked first
    with pytest.raises(ValueError, match=r"trained with dataset .* this run has"):
        retrain_classifier(X, y, init=init, resume=ckpt)
