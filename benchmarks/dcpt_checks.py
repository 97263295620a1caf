"""Benchmark: do the restorers' no-reference checks (``iclr25._guard``) agree with the
reference? Issue 68.

The check (``dcpt.restore``, ``lowlight.enhance``) scores an output beside its input and the
classical result, and warns (and, by default, returns the input) where ours scores below.
Here each check's verdicts are compared with the clean photo's: PSNR against it says
whether an output is worse than its input (and than the classical result). Photos the
project's testbeds and NIQE's pristine model do not use: scikit-learn's ``china`` and
``flower``, matplotlib's ``grace_hopper`` (colour), scikit-image's ``moon``, ``cell`` and
``page`` (grey, as three equal channels); each resized to ``--side`` px (longer side) and
centre-cropped to a 4:3 window.

* blur (Gaussian σ 1.5, 2, 2.5) and defocus (disk radius 2, 3, 4): the classical result is
  Richardson-Lucy with the library's kernel (σ 2, radius 3); the outputs judged are
  Richardson-Lucy with the family's other widths (under- and over-deconvolution), unsharp
  masking, a good restoration with its tone shifted (× 0.8 + 0.1) and the input blurred
  further (σ 1). Measures: today's (re-blur by a kernel whose width is estimated from the
  photo) and the old one (re-blur by the classical restorer's kernel).
* low light (``degrade(..., "low_light")``, 2 draws per photo): the classical result is the
  best of gamma / CLAHE / gamma + NL-means by the measure; the outputs judged are those
  three, the gamma curve to means 0.15 and 0.85, tinted (× (1.1, 1, 0.9)), with added noise
  (σ 0.1), flattened (0.4 · x + 0.3) and the low-light network trained briefly on the dark
  photos (``ZeroReferenceEnhancer``, ``--steps``). Measures: today's (exposure, colour cast,
  noise) and the old one (NIQE). Colour: on the grey photos, whether an output is tinted
  (channel means apart by more than one 8-bit level, 1/255, against the clean photo) and
  whether the check's cast term says so.

Each verdict is a 2×2 table: the check warned (below the input; below the input or the
classical result) or not, against the reference's worse or not. Target: ≥ 90% agreement.

    PYTHONPATH=src OMP_NUM_THREADS=1 python benchmarks/dcpt_checks.py --quick
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import torch
from _timing import row

from iclr25._guard import MEASURES, _Inputs, colour_cast, gaussian_psf, reblur
from iclr25.datasets.images import degrade, psnr
from iclr25.dcpt.baselines import _classical, _richardson_lucy, psfs
from iclr25.lowlight.enhancement import CLASSICAL as LL_CLASSICAL

M = "dcpt_checks"
TARGET = 0.9


def photos(side: int) -> dict[str, torch.Tensor]:
    """The held-out photos, (3, h, w) in [0, 1], longer side ``side``, 4:3."""
    import matplotlib.cbook as cbook
    import skimage.data
    from PIL import Image
    from sklearn.datasets import load_sample_images

    raw = dict(zip(("china", "flower"), load_sample_images().images, strict=True))
    with cbook.get_sample_data("grace_hopper.jpg") as f:
        raw["grace_hopper"] = np.asarray(Image.open(f).convert("RGB"))
    for n in ("moon", "cell", "page"):
        raw[n] = np.repeat(getattr(skimage.data, n)()[..., None], 3, -1)
    out = {}
    for n, a in raw.items():
        h, w = a.shape[:2]
        ch, cw = (h, h * 4 // 3) if w * 3 >= h * 4 else (w * 3 // 4, w)
        a = a[(h - ch) // 2:(h + ch) // 2, (w - cw) // 2:(w + cw) // 2]
        im = Image.fromarray(a).resize((side, side * 3 // 4), Image.LANCZOS)
        out[n] = torch.from_numpy(np.asarray(im, dtype=np.float64) / 255).permute(2, 0, 1)
    return out


def _rl(y: torch.Tensor, psf: np.ndarray) -> torch.Tensor:
    a = y.permute(1, 2, 0).numpy()
    return torch.from_numpy(_richardson_lucy(a, psf)).permute(2, 0, 1).clamp(0, 1)


def blur_cases(clean: dict[str, torch.Tensor]) -> list[dict]:
    """One record per (photo, blur, output): reference PSNRs and both measures' scores."""
    from skimage.filters import unsharp_mask

    from iclr25._guard import disk_psf

    recs = []
    for name, J in clean.items():
        for fam, width in [("blur", s) for s in (1.5, 2.0, 2.5)] + [
                ("defocus", r) for r in (2.0, 3.0, 4.0)]:
            k = gaussian_psf(width) if fam == "blur" else disk_psf(width)
            y = reblur(J[None], torch.from_numpy(k))[0].clamp(0, 1)
            family = (1.5, 2.0, 2.5) if fam == "blur" else (2.0, 3.0, 4.0)
            mk = gaussian_psf if fam == "blur" else disk_psf
            cls = _classical(y[None], fam)[0].double()
            good = _rl(y, mk(width))
            outs = {f"RL {w:g}": _rl(y, mk(w)) for w in family if w != family[1]}
            outs["unsharp"] = torch.from_numpy(unsharp_mask(
                y.permute(1, 2, 0).numpy(), radius=2, amount=1, channel_axis=-1)
                ).permute(2, 0, 1).clamp(0, 1)
            outs["tone-shifted"] = (0.8 * good + 0.1).clamp(0, 1)
            outs["blurred further"] = reblur(y[None], torch.from_numpy(gaussian_psf(1.0)))[0]
            inp = _Inputs(y[None], None, fam)
            old = psfs(fam)[0]

            def new_score(o, inp=inp):
                return float(MEASURES["reblur"].score(o[None], None, inp)[0])

            def old_score(o, y=y, old=old):
                return float(psnr(reblur(o[None], old), y[None]))

            for oname, o in outs.items():
                recs.append(_record(f"{name} {fam} {width:g}", oname, J, y, cls, o,
                                    {"new": new_score, "old": old_score}, higher=True))
    return recs


def _record(case: str, out_name: str, J, y, cls, o, scorers, higher) -> dict:
    """Reference PSNRs of the output, input and classical result, and each measure's."""
    rec = {"case": case, "out": out_name, "ref": (float(psnr(o, J)), float(psnr(y, J)),
                                                 float(psnr(cls, J)))}
    for m, f in scorers.items():
        hi = higher if isinstance(higher, bool) else higher[m]
        s = (f(o), f(y), f(cls))
        rec[m] = s if hi else tuple(-v for v in s)
    return rec


def lowlight_cases(clean: dict[str, torch.Tensor], steps: int, seed: int) -> list[dict]:
    from iclr25._guard import lowlight_psnr, niqe
    from iclr25.lowlight import ZeroReferenceEnhancer
    from iclr25.lowlight.baselines import gamma_to_mean

    dark = {(n, d): degrade(J.float(), "low_light", seed=seed + 10 * i + d).double()
            for i, (n, J) in enumerate(clean.items()) for d in range(2)}
    est = ZeroReferenceEnhancer(width=8, steps=steps, crop=32, batch_size=2,
                                seed=seed).fit([y.float() for y in dark.values()])
    recs = []
    for (name, d), y in dark.items():
        J = clean[name]
        g = gamma_to_mean(y)
        outs = {k: f(y) for k, f in LL_CLASSICAL.items()}
        outs |= {"gamma to 0.15": gamma_to_mean(y, target=0.15),
                 "gamma to 0.85": gamma_to_mean(y, target=0.85),
                 "tinted": (g * torch.tensor([1.1, 1.0, 0.9], dtype=g.dtype)[:, None, None]
                            ).clamp(0, 1),
                 "noisier": (g + 0.1 * torch.randn(g.shape, generator=torch.Generator()
                                                   .manual_seed(d), dtype=g.dtype)).clamp(0, 1),
                 "flattened": 0.4 * g + 0.3,
                 "network": est.transform(y.float(), check=False).double()}
        new = {k: float(lowlight_psnr(v[None], y[None])) for k, v in outs.items()}
        best = max(LL_CLASSICAL, key=new.get)
        old = {k: float(niqe(v[None].float())) for k, v in outs.items()}
        best_old = min(LL_CLASSICAL, key=old.get)
        s_in = (float(lowlight_psnr(y[None], y[None])), float(niqe(y[None].float())))
        for oname, o in outs.items():
            rec = {"case": f"{name} low light {d}", "out": oname,
                   "ref": (float(psnr(o, J)), float(psnr(y, J)), float(psnr(outs[best], J))),
                   "ref_old_cls": float(psnr(outs[best_old], J)),
                   "new": (new[oname], s_in[0], new[best]),
                   "old": (-old[oname], -s_in[1], -old[best_old]),
                   "grey": bool((J[0] == J[1]).all() and (J[1] == J[2]).all())}
            if rec["grey"]:
                tint = float(colour_cast(o[None], J[None]))   # J grey: the output's chroma
                rec["colour"] = (tint > 1 / 255, float(colour_cast(o[None], y[None])) > 1 / 255)
            recs.append(rec)
    return recs


def confusion(recs: list[dict], measure: str, against: str) -> tuple[np.ndarray, float]:
    """2×2 counts [[warned & worse, warned & not], [not warned & worse, neither]] and the
    agreement. ``against``: "input" or "either" (the input or the classical result)."""
    t = np.zeros((2, 2), int)
    for r in recs:
        o, i, c = r["ref"]
        if measure == "old" and "ref_old_cls" in r:
            c = r["ref_old_cls"]
        so, si, sc = r[measure]
        worse = o < i or (against == "either" and o < c)
        warned = so < si or (against == "either" and so < sc)
        t[0 if warned else 1, 0 if worse else 1] += 1
    return t, float(np.trace(t) / t.sum())


def report(kind: str, recs: list[dict]) -> None:
    for against in ("input", "either"):
        agree = {}
        for m in ("new", "old"):
            t, a = confusion(recs, m, against)
            agree[m] = a
            what = "input" if against == "input" else "input or classical"
            print(f"{kind}, warned (below {what}) "
                  f"x reference worse, {m} measure: warned&worse {t[0, 0]}, warned&better "
                  f"{t[0, 1]}, quiet&worse {t[1, 0]}, quiet&better {t[1, 1]}; agreement "
                  f"{a:.1%} of {t.sum()}")
        row(M, f"{kind}: agreement, below {against}", 100 * agree["new"], 100 * agree["old"],
            peer_name="old measure", unit="%", better="higher", target=f">= {TARGET:.0%}",
            met=agree["new"] >= TARGET, note=f"{len(recs)} outputs")
    for r in recs:
        o, i, c = r["ref"]
        so, si, sc = r["new"]
        if (o < i) != (so < si):
            print(f"  disagrees (vs input): {r['case']} / {r['out']}: reference {o:.2f} vs "
                  f"{i:.2f} dB, measure {so:.2f} vs {si:.2f}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="96-px photos, 30 training steps")
    p.add_argument("--side", type=int, default=None)
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    side = a.side or (96 if a.quick else 160)
    steps = a.steps or (30 if a.quick else 150)
    clean = photos(side)
    t0 = time.process_time()
    blur = blur_cases(clean)
    for fam in ("blur", "defocus"):
        report(fam, [r for r in blur if f" {fam} " in r["case"]])
    ll = lowlight_cases(clean, steps, a.seed)
    report("low light", ll)
    col = [r["colour"] for r in ll if "colour" in r]
    t = np.zeros((2, 2), int)
    for tinted, seen in col:
        t[0 if seen else 1, 0 if tinted else 1] += 1
    print(f"low light, grey photos: cast seen x tinted (> 1/255 against the clean photo): "
          f"seen&tinted {t[0, 0]}, seen&not {t[0, 1]}, unseen&tinted {t[1, 0]}, "
          f"unseen&not {t[1, 1]}; agreement {np.trace(t) / max(t.sum(), 1):.1%} of {t.sum()}")
    print(f"CPU {time.process_time() - t0:.1f} s; photos {', '.join(clean)} at "
          f"{side}x{side * 3 // 4}")


if __name__ == "__main__":
    main(sys.argv[1:])
