"""The LSDT guide states the command line's CPU setting, and it is the one `lsdt train` uses
(issue 68 walk 6: the guide's block, at the constructor's paper sizes, took 76 s for 300
steps where `lsdt train` ran 3000 steps in 40 s, and the guide did not say the two differ)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from iclr25 import lsdt
from iclr25.lsdt.cli import _CPU, _PAPER

GUIDE = Path(__file__).parents[2] / "docs" / "guide" / "lsdt.md"


def test_the_guide_states_the_cli_setting_and_the_paper_defaults():
    text = " ".join(GUIDE.read_text().split())
    model = re.search(r"pass `hidden=(\d+), n_blocks=(\d+), context=(\d+)`", text)
    train = re.search(r"`steps=(\d+), batch_size=(\d+), lr=([\de.-]+), warmup=(\d+)`", text)
    assert model and train, "the guide gives the CLI's model and training setting"
    stated = dict(zip(("hidden", "n_blocks", "context"), map(int, model.groups()), strict=True))
    stated.update(zip(("steps", "batch_size", "lr", "warmup"), map(float, train.groups()),
                      strict=True))
    assert stated == _CPU
    ctor = inspect.signature(lsdt.LongShortDecisionTransformer).parameters
    fit = inspect.signature(lsdt.train).parameters
    assert [ctor[k].default for k in ("hidden", "n_blocks", "context")] == [
        _PAPER[k] for k in ("hidden", "n_blocks", "context")] == [128, 3, 20]
    assert [fit[k].default for k in ("batch_size", "lr", "warmup")] == [64, 1e-4, 1000]
    assert "(hidden 128, 3 blocks, context 20; batch 64, lr 1e-4, warmup 1000)" in text
