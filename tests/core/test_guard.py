"""The restorers' check (issue 67): one table of measures, one choice of measure, one rule
for the fallback, and the command lines' choices typed from the same Literals."""

from __future__ import annotations

from typing import Literal, get_args

import pytest
import torch
import typer

from iclr25._cli import choice
from iclr25._guard import (
    BLURS,
    DEFAULT_FALLBACK,
    FALLBACKS,
    MEASURES,
    Fallback,
    Measure,
    check_fallback,
    choose_measure,
    guarded,
)


def test_the_table_holds_every_measure_and_the_fallbacks_are_the_literal():
    assert set(MEASURES) == set(get_args(Measure))
    assert FALLBACKS == get_args(Fallback)
    assert [m for m, s in MEASURES.items() if not s.higher] == ["niqe"]


@pytest.mark.parametrize(("reference", "degradation", "measure"), [
    (torch.zeros(1), "noise", "psnr"),      # a reference wins whatever the degradation
    (torch.zeros(1), None, "psnr"),
    (None, "noise", "r2r"),
    (None, "blur", "reblur"),
    (None, "defocus", "reblur"),
    (None, "motion_blur", "niqe"),          # a blur of unknown direction: no kernel
    (None, "haze", "niqe"),
    (None, None, "niqe"),
])
def test_choose_measure(reference, degradation, measure):
    assert choose_measure(reference, degradation) == measure


def test_the_reblur_kinds_are_those_whose_classical_restorer_has_a_kernel():
    pytest.importorskip("skimage")
    from iclr25.datasets.images import KINDS
    from iclr25.dcpt.baselines import psfs

    assert {k for k in KINDS if psfs(k)} == set(BLURS)


def test_one_rule_for_the_fallback_in_the_api_and_the_cli_spelling():
    assert check_fallback("input", True) == "input"
    with pytest.raises(ValueError, match=r"^fallback='input' needs the check.*check=False$"):
        check_fallback("input", False)
    with pytest.raises(ValueError, match=r"^--fallback input needs the check.*--no-check$"):
        check_fallback("input", False, cli=True)
    with pytest.raises(ValueError, match=r"^--fallback classical needs --degradation .*'haze'"):
        check_fallback("classical", True, degradation="haze", classical=("noise",), cli=True)
    assert check_fallback("classical", True) == "classical"   # every input has one
    # none named: the one default where the check runs, "none" where it does not
    assert check_fallback(None, True) == DEFAULT_FALLBACK == "input"
    assert check_fallback(None, False) == "none"
    with pytest.raises(ValueError, match="fallback"):
        check_fallback("classic", True)


def test_guarded_scores_by_the_table_and_falls_back_per_image():
    # PSNR against a reference: image 0 is restored exactly, image 1 made worse than its input
    ref = torch.full((2, 3, 8, 8), 0.5)
    x = ref + 0.1
    ours = torch.stack([ref[0], ref[1] + 0.3])
    with pytest.warns(UserWarning, match=r"t: image 1 scores below the input \(PSNR against "
                                         r"the reference\): ours 10\.46 dB, input 20\.00 dB"):
        out = guarded(x, ours, lambda b: b, {}, measure="psnr", fallback="input",
                      reference=ref, what="t")
    assert torch.equal(out[0], ours[0]) and torch.equal(out[1], x[1])


def test_choice_takes_the_literal_and_refuses_anything_else_in_one_line(capsys):
    parse = choice(Literal["a", "b"], "--opt")
    assert parse("b") == "b"
    with pytest.raises(typer.Exit) as exc:
        parse("c")
    assert exc.value.exit_code == 2
    assert capsys.readouterr().err == "error: --opt must be one of a, b; got 'c'\n"
