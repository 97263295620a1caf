"""The shared progress bar: silent off a terminal and under pytest, visible on a terminal."""

import os
import subprocess
import sys

import pytest

from iclr25 import _progress
from iclr25._progress import estimating, progress_bar, track

_SCRIPT = ("from iclr25._progress import track\n"
           "import time\n"
           "for _ in track(range(3), 'training'):\n"
           "    time.sleep(0.05)\n"
           "print('done')\n")


def test_silent_when_not_a_terminal(capsys):
    assert list(track(range(4), "steps")) == [0, 1, 2, 3]
    with progress_bar(2, "fit") as advance:
        advance(loss=0.5)
        advance()
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_silent_through_a_pipe():
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                         check=True)
    assert out.stdout == "done\n" and out.stderr == ""


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_visible_on_a_pseudo_terminal():
    master, slave = os.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], stdout=subprocess.PIPE,
                          stderr=slave, env=env, check=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.stdout == b"done\n"
    assert b"training" in b"".join(chunks)


def test_verbose_false_silences_and_true_forces(capsys):
    list(track(range(2), "quiet", verbose=False))
    assert capsys.readouterr().err == ""
    list(track(range(2), "loud", verbose=True))
    assert "loud" in capsys.readouterr().err


def test_estimate_printed_once_inside_estimating_only(capsys, monkeypatch):
    monkeypatch.setattr(_progress, "ESTIMATE_AFTER_S", 0.0)
    with estimating():
        with progress_bar(4, "fit", verbose=True) as advance:
            advance()
            advance()
    err = capsys.readouterr().err
    assert err.count("in all") == 1 and "steps 2-2 of 4, after the first" in err
    with progress_bar(4, "fit", verbose=True) as advance:  # outside estimating(): no estimate
        advance()
    assert "in all" not in capsys.readouterr().err
    with estimating(), progress_bar(4, "fit") as advance:  # not a terminal: silent
        advance()
    assert capsys.readouterr().err == ""


def test_estimate_counts_one_time_work_once(capsys, monkeypatch):
    # issue 68: a 13-s fit whose first step (with its set-up) took 3.2 s was extrapolated
    # from that step alone: "about 42m 42s in all"
    clock = iter([0.0, 3.2, 3.21, 3.22, 3.23])  # start, then after each of 4 advances
    monkeypatch.setattr(_progress, "_clock", lambda: next(clock))
    with estimating(), progress_bar(800, "fit", verbose=True) as advance:
        for _ in range(4):
            advance()
    err = capsys.readouterr().err
    # step 2 took 0.01 s: 3.2 s once + 799 x 0.01 s = 11.19 s, not 800 x 3.2 s
    assert err.count("in all") == 1 and "about 11s in all" in err, err
    assert "steps 2-2 of 800" in err, err


def test_duration_format():
    assert [_progress._duration(s) for s in (4.4, 75, 3725)] == ["4s", "1m 15s", "1h 02m"]


def test_fit_minibatch_shows_epochs_only_when_named(capsys):
    import torch

    from iclr25._train import fit_minibatch

    net = torch.nn.Linear(2, 1)
    X, y = torch.randn(8, 2), torch.randn(8, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    mse = torch.nn.functional.mse_loss
    fit_minibatch(net, mse, X, y, epochs=2, batch_size=4, optimizer=opt, progress="toy fit",
                  verbose=True)
    assert "toy fit" in capsys.readouterr().err
    fit_minibatch(net, mse, X, y, epochs=2, batch_size=4, optimizer=opt, verbose=True)
    assert capsys.readouterr().err == ""  # no description: no bar


def test_a_run_counted_in_steps_shows_its_total_and_time_left(capsys, monkeypatch):
    # issue 68's walk: DCPT's 2,000-step pre-training showed "49/?" and no time left (every
    # interval="step" bar had no total), so a run of hours looked like one of minutes
    import torch

    from iclr25._train import fit_minibatch

    monkeypatch.setattr(_progress, "ESTIMATE_AFTER_S", 0.0)
    net = torch.nn.Linear(2, 1)
    X, y = torch.randn(8, 2), torch.randn(8, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    mse = torch.nn.functional.mse_loss
    with estimating():
        fit_minibatch(net, mse, X, y, epochs=2, batch_size=4, optimizer=opt, interval="step",
                      progress="toy fit", steps=4, verbose=True)
    err = capsys.readouterr().err
    assert "4/4" in err and "in all" in err and "steps 2-2 of 4" in err, err
    with estimating():
        fit_minibatch(net, mse, X, y, epochs=2, batch_size=4, optimizer=opt, interval="step",
                      progress="toy fit", verbose=True)
    err = capsys.readouterr().err
    assert "4/?" in err and "in all" not in err, err  # the count alone: no estimate
    with pytest.raises(ValueError, match="steps"):
        fit_minibatch(net, mse, X, y, epochs=1, batch_size=4, optimizer=opt, interval="step",
                      progress="toy fit", steps=0)
