"""Issue 55: the commands that trained in silence show a progress bar on a terminal (here
FORCE_COLOR makes rich take the runner's stream for one) and nothing off a terminal."""

import numpy as np
import pytest
from typer.testing import CliRunner

from iclr25.cli import app


def _inputs(t):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    np.savez(t / "d.npz", X=X, y=(X[:, 0] > 0).astype(int))
    y = np.arange(40) % 2
    Z = rng.normal(size=(40, 8)) + 2.0 * y[:, None]
    np.save(t / "oom.npy", np.tanh(Z @ rng.normal(size=(8, 5))).astype(np.float32))
    np.save(t / "im.npy", Z.astype(np.float32))
    np.savetxt(t / "ya.csv", y, fmt="%d")
    np.savetxt(t / "p.csv", np.stack([np.arange(8), np.arange(8)], 1), fmt="%d", delimiter=",")
    np.save(t / "cols.npy", rng.normal(size=(64, 16)).astype(np.float32))
    np.save(t / "seqs.npy", rng.normal(size=(4, 3, 8)).astype(np.float32))


COMMANDS = {
    "LoCoDL iterations": ["locodl", "fit", "{t}/d.npz", "--clients", "2", "--max-iter", "300",
                          "--baseline", "none"],
    "COX training": ["cox", "fit", "--oom", "{t}/oom.npy", "--im", "{t}/im.npy", "--im-labels",
                     "{t}/ya.csv", "--pairs", "{t}/p.csv", "--steps", "5", "--out",
                     "{t}/m.safetensors"],
    "URLOST training": ["urlost", "fit", "{t}/cols.npy", "--clusters", "4", "--neighbors", "3",
                        "--epochs", "1", "--dim", "16", "--out", "{t}/u.safetensors"],
    "V3 training": ["v3", "fit", "{t}/seqs.npy", "--codes", "2", "--epochs", "1",
                    "--batch-size", "2", "--out", "{t}/v.safetensors"],
    "training the zoo": ["mother", "make-zoo", "{t}/zoo", "--trees", "1", "--children", "1",
                         "--grandchildren", "0", "--root-steps", "2", "--finetune-steps", "2"],
}


@pytest.mark.parametrize("bar", list(COMMANDS))
def test_silent_command_shows_progress_on_a_terminal_only(bar, tmp_path, monkeypatch):
    _inputs(tmp_path)
    argv = [a.format(t=tmp_path) for a in COMMANDS[bar]]
    r = CliRunner().invoke(app, argv)  # a test's stream is no terminal: silent
    assert r.exit_code == 0, r.output
    assert bar not in r.output
    monkeypatch.setenv("FORCE_COLOR", "1")
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 0, r.output
    assert bar in r.output
