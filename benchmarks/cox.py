"""COX benchmark: accuracy and fit time against ERM, LabelSpreading and SelfTrainingClassifier
on the same digits-with-a-sensor data; match purity and time of the mutual-NN matcher on
COX's learned space against POT's entropic Gromov-Wasserstein; exact ``"mnn"`` against faiss's
exact inner-product index both ways (same pairs asserted, then timed alike), its measured peak
RSS, and its time at 1e5 (extrapolated at --quick).

    python benchmarks/cox.py [--quick]

Targets (issue 13): COX fit <= 30 s at n = 1347; ``"mnn"`` at 1e5 x 1e5, d = 64, <= 60 s and
<= 1 GB (chunked, O(chunk * n) memory). ``--quick`` uses 100 COX steps and n <= 2e4 for mnn.
"""

from __future__ import annotations

import argparse
import time
import warnings

import torch
from _timing import compare, peak_rss_mb, row, timed_row

from iclr25.claims import torch_threads
from iclr25.cox import COX, emergent_correspondences, match_purity
from iclr25.cox.claim import _erm, _sklearn
from iclr25.cox.testbed import digit_modalities, semi_supervised_split

M = "cox"


def _timed(fn):  # noqa: ANN001, ANN202
    """Result and CPU seconds of one call (one thread: robust to a loaded machine)."""
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def semi_table(steps: int) -> None:
    d = digit_modalities(0, im_steps=150)
    pairs, y = semi_supervised_split(d, 0.1, 0)
    labels = {m: d.y_im for m in d.im_train}

    def cox() -> float:
        m = COX(10, bottleneck=64, steps=steps, seed=0, floor="off").fit(  # COX itself
            d.X_oom, d.im_train, labels, pairs=pairs, y_oom=y)
        return m.score(d.X_oom_test, d.y_oom_test)

    rows = {"COX": _timed(cox), "ERM (10% labels)": _timed(lambda: _erm(d, y, steps, 0)),
            "LabelSpreading(knn)": _timed(lambda: _sklearn(d, y, "spreading")),
            "SelfTraining(LogReg)": _timed(lambda: _sklearn(d, y, "self_training"))}
    acc0, t0 = rows["COX"]
    print(f"\nSemi-supervised OOM, n = {len(d.X_oom)} train / {len(d.X_oom_test)} test, "
          f"{steps} COX steps")
    for name, (acc, t) in rows.items():
        print(f"{name:<22}{acc:>10.3f}{t:>9.2f} s CPU")
    best = max((k for k in rows if k != "COX"), key=lambda k: rows[k][0])
    row(M, f"semi-supervised OOM accuracy (10% labels, {steps} steps)", acc0, rows[best][0],
        better="higher", unit="accuracy", peer_name=f"{best} (best of ERM, LabelSpreading, "
        "SelfTraining)", note=f"fit s CPU: COX {t0:.1f}, {best} {rows[best][1]:.2f}")
    # the bound is a time; the ratio to the plain network trained alike in this run
    # is what a loaded machine leaves standing
    row(M, "COX fit time, n = 1347", t0, rows["ERM (10% labels)"][1], unit="s CPU",
        peer_name=f"ERM, the same network and {steps} steps (same run)", target="≤ 30 s",
        met=t0 <= 30)


def purity_table(steps: int) -> None:
    d = digit_modalities(0, im_steps=150)
    labels = {m: d.y_im for m in d.im_train}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, t_cox = _timed(lambda: COX(10, bottleneck=64, steps=steps, seed=0).fit(
            d.X_oom, d.im_train, labels))
        z_im = torch.cat([d.im_train[k] for k in sorted(d.im_train)], 1)
        n = 400
        P_gw, t_gw = _timed(lambda: emergent_correspondences(z_im[:n], d.X_oom[:n], "gw"))
    pur_gw = match_purity(P_gw, d.y_im[:n], d.y_oom[:n])
    pur = match_purity(m.correspondences_, d.y_im, d.y_oom)
    row(M, "no pairs: purity of matches (chance 0.1)", pur, pur_gw, better="higher",
        unit="purity", peer_name=f"POT entropic GW on raw features ({n} x {n})",
        note=f"COX {len(m.correspondences_)} pairs in {t_cox:.1f} s; GW {len(P_gw)} pairs in "
        f"{t_gw:.1f} s")


def peer_mnn(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Mutual cosine nearest neighbours with faiss's exact inner-product index, both ways."""
    import faiss

    a = torch.nn.functional.normalize(A.float(), dim=1).numpy()
    b = torch.nn.functional.normalize(B.float(), dim=1).numpy()
    ib, ia = faiss.IndexFlatIP(b.shape[1]), faiss.IndexFlatIP(a.shape[1])
    ib.add(b)
    ia.add(a)
    fwd = torch.from_numpy(ib.search(a, 1)[1][:, 0])
    bwd = torch.from_numpy(ia.search(b, 1)[1][:, 0])
    keep = bwd[fwd] == torch.arange(len(fwd))
    return torch.stack([torch.arange(len(fwd))[keep], fwd[keep]], 1)


def _mnn_job(n: int) -> None:
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    emergent_correspondences(torch.randn(n, 64, generator=g), torch.randn(n, 64, generator=g))


def mnn_table(sizes: list[int]) -> None:
    import faiss

    faiss.omp_set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    for n in sizes:
        A, B = torch.randn(n, 64, generator=g), torch.randn(n, 64, generator=g)
        ours = {tuple(p) for p in emergent_correspondences(A, B, "mnn").tolist()}
        peer = {tuple(p) for p in peer_mnn(A, B).tolist()}
        same = len(ours & peer) / max(len(ours | peer), 1)
        assert same >= 0.999, f"mnn pairs: Jaccard {same:.4f} with faiss"
        t_o, t_p = compare(lambda A=A, B=B: emergent_correspondences(A, B, "mnn"),
                           lambda A=A, B=B: peer_mnn(A, B), 3)
        timed_row(M, f"mutual NN n={n} d=64", t_o, t_p, scale=1.0, unit="s CPU",
                  peer_name="faiss IndexFlatIP both ways",
                  agreement=f"pair sets Jaccard {same:.4f} ({len(ours)} pairs)")
    mem = peak_rss_mb(_mnn_job, n)
    row(M, f"mutual NN n={n} d=64: peak RSS", mem, None, peer_name="-", unit="MB",
        target="≤ 1024 MB (at 1e5)", met=mem <= 1024, agreement="measured, spawned process")
    per, per_p = t_o.cpu / (n * n / 1e9), t_p.cpu / (n * n / 1e9)
    row(M, "mutual NN n=1e5 d=64" + ("" if n == 100_000 else " (extrapolated, O(n²))"),
        per * 10, per_p * 10, peer_name="faiss IndexFlatIP both ways (extrapolated alike)",
        unit="s CPU", target="≤ 60 s", met=per * 10 <= 60)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    q = ap.parse_args(argv).quick
    with torch_threads(1):
        semi_table(100 if q else 800)
        purity_table(100 if q else 800)
        mnn_table([5_000, 20_000] if q else [10_000, 30_000, 100_000])


if __name__ == "__main__":
    main()
