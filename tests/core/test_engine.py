"""The training engine behind fit_minibatch: today's numbers, resume, DDP, bf16, bad checkpoints."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

from iclr25._train import fit_minibatch, seeded_mlp

pytest.importorskip("lightning_fabric")


def _data(n: int = 200, d: int = 5):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, d, generator=g)
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).long()


def _setup(d: int = 5, hidden: int = 16, dropout: float = 0.0, sched: bool = False):
    model = seeded_mlp([d, hidden, 2], seed=0)
    if dropout:
        model = nn.Sequential(model[0], model[1], nn.Dropout(dropout), model[2])
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.7) if sched else None
    return model, opt, scheduler


def _params(model: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.state_dict().values()]


def _reference_loop(model, loss_fn, X, y, epochs, batch_size, opt, seed):
    """The loop fit_minibatch ran before the engine (main 86e001d), for a known answer."""
    gen = torch.Generator().manual_seed(seed)
    hist = []
    for _ in range(epochs):
        model.train()
        total, steps = 0.0, 0
        for idx in torch.randperm(len(X), generator=gen).split(batch_size):
            loss = loss_fn(model(X[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach())
            steps += 1
        hist.append(total / steps)
    return hist


def test_single_process_float32_is_the_old_loop_bit_for_bit(one_thread):
    X, y = _data()
    m1, o1, _ = _setup()
    h1 = fit_minibatch(m1, F.cross_entropy, X, y, epochs=3, batch_size=16, optimizer=o1, seed=4)
    m2, o2, _ = _setup()
    h2 = _reference_loop(m2, F.cross_entropy, X, y, 3, 16, o2, 4)
    assert h1 == h2
    assert all(torch.equal(a, b) for a, b in zip(_params(m1), _params(m2), strict=True))


def test_hooks_run_as_in_the_old_loop_bit_for_bit(one_thread):
    """callback (skipping some batches), batches=, a scheduler and on_epoch_end stopping:
    the same steps as the old loop's, written out here."""
    X, y = _data()

    def batches(epoch):             # every other row, a different offset per epoch
        return list(torch.arange(epoch % 2, len(X), 2).split(24))

    def callback(idx, losses):      # IES-like: a per-sample loss, some batches skipped
        return None if int(idx[0]) % 5 == 0 else losses.mean() * 0.5

    def loss_fn(out, t):
        return F.cross_entropy(out, t, reduction="none")

    m1, o1, s1 = _setup(sched=True)
    h1 = fit_minibatch(m1, loss_fn, X, y, epochs=5, batch_size=24, optimizer=o1,
                       callback=callback, batches=batches, scheduler=s1,
                       on_epoch_end=lambda e: e == 2)
    m2, o2, s2 = _setup(sched=True)
    h2 = []
    for epoch in range(3):
        total, steps = 0.0, 0
        for idx in batches(epoch):
            loss = callback(idx, loss_fn(m2(X[idx]), y[idx]))
            if loss is None:
                continue
            o2.zero_grad(set_to_none=True)
            loss.backward()
            o2.step()
            total, steps = total + float(loss.detach()), steps + 1
        h2.append(total / steps)
        s2.step()
    assert h1 == h2
    assert all(torch.equal(a, b) for a, b in zip(_params(m1), _params(m2), strict=True))


class _Crash(Exception):
    pass


def _crashing(loss_fn, after: int):
    """loss_fn that raises on call number ``after + 1``: a run killed after ``after`` steps."""
    calls = [0]

    def fn(out, t):
        calls[0] += 1
        if calls[0] > after:
            raise _Crash
        return loss_fn(out, t)
    return fn


@pytest.fixture
def global_rng():
    """Dropout draws from torch's global RNG: each run starts it from the same seed (a fresh
    process would), and the test leaves it as it found it."""
    with torch.random.fork_rng(devices=[]):
        yield lambda: torch.manual_seed(11)


@pytest.mark.parametrize("k", [7, 13, 26])   # mid-epoch, mid-epoch, an epoch's end (13/epoch)
def test_resumed_run_equals_uninterrupted_bit_for_bit(one_thread, global_rng, tmp_path, k):
    X, y = _data()
    kw = dict(epochs=3, batch_size=16, seed=2)
    m_ref, o_ref, s_ref = _setup(dropout=0.2, sched=True)
    ema_ref = torch.optim.swa_utils.AveragedModel(m_ref)
    global_rng()
    h_ref = fit_minibatch(m_ref, F.cross_entropy, X, y, optimizer=o_ref, scheduler=s_ref,
                          ema=ema_ref, **kw)

    ckpt = tmp_path / "run.ckpt"
    m, o, s = _setup(dropout=0.2, sched=True)
    global_rng()
    with pytest.raises(_Crash):
        fit_minibatch(m, _crashing(F.cross_entropy, k), X, y, optimizer=o, scheduler=s,
                      ema=torch.optim.swa_utils.AveragedModel(m), checkpoint=ckpt,
                      checkpoint_every=k, **kw)
    m, o, s = _setup(dropout=0.2, sched=True)   # a fresh process: the same objects anew
    ema = torch.optim.swa_utils.AveragedModel(m)
    torch.manual_seed(99)                       # whatever it is now: the checkpoint's wins
    h = fit_minibatch(m, F.cross_entropy, X, y, optimizer=o, scheduler=s, ema=ema,
                      resume=ckpt, **kw)
    assert h == h_ref
    assert all(torch.equal(a, b) for a, b in zip(_params(m), _params(m_ref), strict=True))
    assert all(torch.equal(a, b) for a, b in zip(_params(ema), _params(ema_ref), strict=True))
    assert s.get_last_lr() == s_ref.get_last_lr()


def test_ddp_two_processes_equal_one_at_the_same_global_batch(one_thread):
    # 200 rows in batches of 15: 14 steps per epoch, the last batch of 5 split 3/2, so the
    # shares are weighted; 2 epochs = 28 steps (>= 20)
    X, y = _data()
    kw = dict(epochs=2, batch_size=15, seed=3)
    m1, o1, _ = _setup()
    h1 = fit_minibatch(m1, F.cross_entropy, X, y, optimizer=o1, **kw)
    m2, o2, _ = _setup()
    h2 = fit_minibatch(m2, F.cross_entropy, X, y, optimizer=o2, devices=2, strategy="ddp", **kw)
    assert h1 == pytest.approx(h2, abs=1e-5)
    for a, b in zip(_params(m1), _params(m2), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)
    assert o2.state_dict()["state"][0]["step"] == o1.state_dict()["state"][0]["step"] == 28


def test_bf16_mixed_trains_under_autocast(one_thread):
    X, y = _data()
    m32, o32, _ = _setup()
    h32 = fit_minibatch(m32, F.cross_entropy, X, y, epochs=5, batch_size=20, optimizer=o32)
    m, o, _ = _setup()
    h = fit_minibatch(m, F.cross_entropy, X, y, epochs=5, batch_size=20, optimizer=o,
                      precision="bf16-mixed")
    assert h[-1] < 0.6 * h[0]                            # it learns
    assert h != h32                                      # and the forward ran in bfloat16
    assert all(p.dtype == torch.float32 for p in m.parameters())   # master weights


def test_dataset_is_read_in_the_same_order_as_tensors(one_thread):
    X, y = _data()
    m1, o1, _ = _setup()
    h1 = fit_minibatch(m1, F.cross_entropy, X, y, epochs=2, batch_size=16, optimizer=o1, seed=5)

    class Rows(Dataset):
        def __init__(self):
            self.asked = 0

        def __len__(self):
            return len(X)

        def __getitem__(self, i):
            self.asked += 1
            return X[i], y[i]

    ds = Rows()
    m2, o2, _ = _setup()
    h2 = fit_minibatch(m2, F.cross_entropy, ds, None, epochs=2, batch_size=16, optimizer=o2,
                       seed=5)
    assert h1 == h2 and ds.asked == 2 * len(X)
    assert all(torch.equal(a, b) for a, b in zip(_params(m1), _params(m2), strict=True))


def test_dataloader_with_a_seeded_generator_resumes_exactly(one_thread, tmp_path):
    X, y = _data()

    def loader():
        return DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True,
                          generator=torch.Generator().manual_seed(9))
    m_ref, o_ref, _ = _setup()
    h_ref = fit_minibatch(m_ref, F.cross_entropy, loader(), None, epochs=2, batch_size=16,
                          optimizer=o_ref)
    ckpt = tmp_path / "dl.ckpt"
    m, o, _ = _setup()
    with pytest.raises(_Crash):
        fit_minibatch(m, _crashing(F.cross_entropy, 5), loader(), None, epochs=2,
                      batch_size=16, optimizer=o, checkpoint=ckpt, checkpoint_every=5)
    m, o, _ = _setup()
    h = fit_minibatch(m, F.cross_entropy, loader(), None, epochs=2, batch_size=16, optimizer=o,
                      resume=ckpt)
    assert h == h_ref
    assert all(torch.equal(a, b) for a, b in zip(_params(m), _params(m_ref), strict=True))


# -- bad input -----------------------------------------------------------------------------


def _saved(tmp_path, hidden=16, batch_size=16, n=200):
    X, y = _data(n)
    m, o, _ = _setup(hidden=hidden)
    ckpt = tmp_path / "saved.ckpt"
    fit_minibatch(m, F.cross_entropy, X, y, epochs=1, batch_size=batch_size, optimizer=o,
                  checkpoint=ckpt)
    return ckpt


def _refused(ckpt, match, hidden=16, batch_size=16, n=200):
    """Resume from ``ckpt`` into a fresh model; the error must match and nothing change."""
    X, y = _data(n)
    m, o, _ = _setup(hidden=hidden)
    before, raw = _params(m), ckpt.read_bytes()
    with pytest.raises(ValueError, match=match):
        fit_minibatch(m, F.cross_entropy, X, y, epochs=2, batch_size=batch_size, optimizer=o,
                      checkpoint=ckpt, resume=ckpt)
    assert ckpt.read_bytes() == raw
    assert all(torch.equal(a, b) for a, b in zip(before, _params(m), strict=True))


def test_a_checkpoint_is_the_owners_and_the_same_bytes_for_the_same_run(tmp_path):
    # main named torch.save's archive after a random temporary file: two saves of one state
    # differed
    def saved(name):
        torch.manual_seed(0)               # the checkpoint holds the global RNG's state
        (tmp_path / name).mkdir()
        return _saved(tmp_path / name)

    a, b = saved("a"), saved("b")
    assert a.read_bytes() == b.read_bytes() and a.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in a.parent.iterdir()) == ["saved.ckpt"]   # no leftovers


def test_checkpoint_of_another_model_size_is_refused(tmp_path):
    _refused(_saved(tmp_path, hidden=8), r"'0\.weight' has shape \(8, 5\) there, \(16, 5\)")


def test_checkpoint_of_another_model_is_refused(tmp_path):
    X, y = _data()
    m = nn.Sequential(nn.Linear(5, 2))
    ckpt = tmp_path / "other.ckpt"
    fit_minibatch(m, F.cross_entropy, X, y, epochs=1, batch_size=16,
                  optimizer=torch.optim.SGD(m.parameters(), lr=0.1), checkpoint=ckpt)
    _refused(ckpt, "model does not fit this one: missing")


def test_resume_with_another_batch_size_or_dataset_is_refused(tmp_path):
    ckpt = _saved(tmp_path)
    _refused(ckpt, "batch_size 16, this run has 32", batch_size=32)
    _refused(ckpt, "dataset length 200, this run has 150", n=150)


def test_corrupted_or_foreign_checkpoint_is_refused(tmp_path):
    ckpt = _saved(tmp_path)
    raw = ckpt.read_bytes()
    ckpt.write_bytes(raw[: len(raw) // 2])
    _refused(ckpt, "is not a readable checkpoint")
    torch.save({"state_dict": {}}, ckpt)
    _refused(ckpt, "not a checkpoint of this training loop")


def test_bad_engine_options_are_named(tmp_path):
    X, y = _data()
    m, o, _ = _setup()

    def fit(**kw):
        return fit_minibatch(m, F.cross_entropy, X, y, epochs=1, batch_size=16, optimizer=o,
                             **kw)
    with pytest.raises(ValueError, match="devices=4096 but this machine has"):
        fit(devices=4096)
    with pytest.raises(ValueError, match="precision='16-mixed' needs a CUDA device"):
        fit(precision="16-mixed")
    with pytest.raises(ValueError, match="precision"):
        fit(precision="fp8")
    with pytest.raises(ValueError, match="checkpoint_every needs checkpoint="):
        fit(checkpoint_every=3)
    with pytest.raises(ValueError, match="resume: no checkpoint file"):
        fit(resume=tmp_path / "absent.ckpt")
    with pytest.raises(ValueError, match="callback= is not supported with devices > 1"):
        fit(devices=2, callback=lambda idx, loss: loss.mean())
    with pytest.raises(ValueError, match="y must be None"):
        fit_minibatch(m, F.cross_entropy, TensorDataset(X, y), y, epochs=1, batch_size=16,
                      optimizer=o)


# -- one vocabulary: the engine's keywords ---------------------------------------------------


def test_engine_keywords_are_defined_once_and_taken_by_every_training_api():
    import inspect
    import typing

    from iclr25._engine import Engine, EngineOptions
    from iclr25.comm import CoMMEmbedder
    from iclr25.comm.training import pretrain, pretrain_together
    from iclr25.lsdt.training import train as lsdt_train
    from iclr25.urlost import URLOST

    keys = list(EngineOptions.__annotations__)
    fields = {f: Engine.__dataclass_fields__[f].default for f in keys}
    # fit_minibatch (and LOS's/ToSS's scikit-learn style fit signatures) spell them out:
    # the same names and defaults as the Engine that checks them
    sig = inspect.signature(fit_minibatch).parameters
    assert {k: sig[k].default for k in keys} == fields
    for fn in (pretrain, pretrain_together, lsdt_train, CoMMEmbedder.fit, URLOST.fit):
        last = list(inspect.signature(fn).parameters.values())[-1]
        hint = typing.get_type_hints(inspect.unwrap(fn))[last.name]
        assert last.kind is last.VAR_KEYWORD and typing.get_args(hint) == (EngineOptions,), \
            fn.__qualname__


def test_a_stream_with_on_step_stops_and_equals_the_plain_loop(one_thread, tmp_path):
    from iclr25._engine import Stream

    X, y = _data()

    class Scaled(nn.Module):                # (x, scalar) -> logits, scalar
        def __init__(self):
            super().__init__()
            self.net = _setup()[0]

        def forward(self, xs):
            return self.net(xs[0]), xs[1]

    def fit(stop_at=None, **engine):
        model = Scaled()
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        gen = torch.Generator().manual_seed(3)
        seen = []

        def batches(_):
            for _ in range(6):
                idx = torch.randint(len(X), (7,), generator=gen)
                yield (X[idx], float(torch.rand(1, generator=gen))), y[idx]

        def on_step(step, loss):
            seen.append(step)
            return step == stop_at

        h = fit_minibatch(model, lambda out, t: out[1] * F.cross_entropy(out[0], t),
                          Stream(batches, len(X)), None, epochs=1, batch_size=7, optimizer=opt,
                          seed=gen, interval="step", on_step=on_step, **engine)
        return h, seen, _params(model)

    # known answer: the same draws and steps written out by hand
    model = Scaled()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(3)
    ref = []
    for _ in range(6):
        idx = torch.randint(len(X), (7,), generator=gen)
        s = float(torch.rand(1, generator=gen))
        loss = s * F.cross_entropy(model.net(X[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        ref.append(float(loss.detach()))
    h, seen, state = fit()
    assert h == ref and seen == [1, 2, 3, 4, 5, 6]
    assert all(torch.equal(a, b) for a, b in zip(state, _params(model), strict=True))
    # on_step stops; the final checkpoint resumed trains no further
    h, seen, state = fit(stop_at=4, checkpoint=tmp_path / "s.ckpt")
    assert h == ref[:4] and seen == [1, 2, 3, 4]
    h2, seen2, state2 = fit(stop_at=4, resume=tmp_path / "s.ckpt")
    assert h2 == h and seen2 == []
    assert all(torch.equal(a, b) for a, b in zip(state, state2, strict=True))
    # 2 processes: each takes its rows (4/3) of the batch, the drawn scalar shared
    h, _, state = fit(devices=2)
    assert h == pytest.approx(ref, rel=1e-5)
    torch.testing.assert_close(state, _params(model), rtol=0, atol=1e-5)


def test_a_gathered_loop_reads_each_process_own_rows_of_a_dataset(one_thread, tmp_path):
    """Issue 71: under DDP a gathered (contrastive) loss is given the global batch's shape,
    but each process reads only its ``local_rows`` share from the Dataset: every row is read
    once an epoch over the processes, and the run equals one process to 1e-5."""
    import os

    from iclr25._engine import gather, local_rows

    X, _ = _data(n=45)
    log = tmp_path / "reads.txt"

    class Rows(Dataset):
        def __len__(self):
            return len(X)

        def __getitem__(self, i):
            with log.open("a") as f:
                f.write(f"{os.getpid()} {i}\n")
            return X[i], torch.tensor(i)

    class Contrast(nn.Module):      # every row against the global batch's rows (negatives)
        def __init__(self):
            super().__init__()
            self.net = seeded_mlp([5, 8, 4], seed=0)

        def forward(self, x):
            z = F.normalize(gather(self.net(local_rows(x))), dim=1)
            return (z @ z.T / 0.5).logsumexp(1).mean() - (z * z).sum(1).mean() / 0.5

    def run(**engine):
        model = Contrast()
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        h = fit_minibatch(model, lambda loss, _: loss, Rows(), None, epochs=3, batch_size=16,
                          optimizer=opt, seed=2, gathered=True, **engine)
        return h, _params(model)

    h1, p1 = run()
    log.unlink()
    h2, p2 = run(devices=2, strategy="ddp")
    assert h2 == pytest.approx(h1, rel=1e-5, abs=1e-5)
    for a, b in zip(p1, p2, strict=True):
        torch.testing.assert_close(b, a, rtol=0, atol=1e-5)
    reads: dict[str, list[int]] = {}
    for line in log.read_text().split("\n")[:-1]:
        pid, i = line.split()
        reads.setdefault(pid, []).append(int(i))
    # batches of 16, 16, 13 split 8/8, 8/8, 7/6: 23 and 22 rows an epoch (not 45 each)
    assert sorted(map(len, reads.values())) == [3 * 22, 3 * 23]
    assert sorted(sum(reads.values(), [])) == sorted(list(range(45)) * 3)   # each once an epoch
