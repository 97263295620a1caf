"""LOS re-training vs the standard stage-2 peers on the same frozen features.

Peers: CE re-training, class-balanced CE (effective number), logit adjustment (Menon et al.),
LWS (Kang et al.), all through the same SGD loop (lr 5e-4, momentum 0.9, cosine, 20 epochs,
batch 64, from the stage-1 head), plus scikit-learn's
``LogisticRegression(class_weight="balanced")`` fitted to convergence on the same features.
Task: the 100-class long-tailed (IR=100) Gaussian mixture of ``iclr25.los.claim`` (same data,
stage 1 and seeds).

    python benchmarks/los.py --quick     # 1 seed, 20 stage-1 epochs (seconds)
    python benchmarks/los.py             # 3 seeds, 60 stage-1 epochs (a few minutes)
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from _timing import row

from iclr25.los import group_accuracy, logits_magnitude, retrain_classifier
from iclr25.los.testbed import long_tailed_mixture, train_stage1

M = "los"

METHODS = [("CE re-train", "ce", {}), ("LOS eps=0.98", "los", {"smoothing": 0.98}),
           ("CB-CE (beta=0.9999)", "cbce", {}), ("logit adj. (tau=1)", "la", {}),
           ("LWS", "lws", {})]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sklearn", action=argparse.BooleanOptionalAction, default=True,
                    help="fit LogisticRegression too (default: yes)")
    args = ap.parse_args(argv)
    use_sklearn = args.sklearn
    torch.set_num_threads(1)
    seeds = [0] if args.quick else [0, 1, 2]
    rows: dict[str, list[dict]] = {}
    for seed in seeds:
        task = long_tailed_mixture(test_per_class=30 if args.quick else 100, seed=seed)
        model = train_stage1(task.X_train, task.y_train, task.n_classes,
                             epochs=20 if args.quick else 60,
                             batch_size=128 if args.quick else 64, seed=seed)
        with torch.no_grad():
            f_tr, f_te = model.features(task.X_train), model.features(task.X_test)
        for name, method, kw in METHODS:
            t = time.perf_counter()
            head = retrain_classifier(f_tr, task.y_train, method, init=model.fc, seed=seed, **kw)
            sec = time.perf_counter() - t
            with torch.no_grad():
                z = head(f_te)
            rows.setdefault(name, []).append(
                {**group_accuracy(z.argmax(1), task.y_test, task.train_counts),
                 "loma": float(logits_magnitude(z, task.y_test).mean()), "sec": sec})
        if use_sklearn:
            from sklearn.linear_model import LogisticRegression
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # lbfgs may stop at max_iter
                lr = LogisticRegression(class_weight="balanced", max_iter=300)
                lr.fit(f_tr.numpy(), task.y_train.numpy())
            sec = time.perf_counter() - t
            z = torch.as_tensor(lr.decision_function(f_te.numpy()))
            rows.setdefault("sklearn LogReg balanced", []).append(
                {**group_accuracy(z.argmax(1), task.y_test, task.train_counts),
                 "loma": float(logits_magnitude(z, task.y_test).mean()), "sec": sec})

    base = {k: np.mean([r[k] for r in rows["CE re-train"]]) for k in ("all", "sec")}
    print(f"K=100, IR=100 Gaussian mixture, seeds {seeds}; accuracies in %, mean over seeds")
    head = (f"{'method':<25}{'bAcc':>7}{'±':>5}{'many':>7}{'medium':>8}{'few':>6}{'LoMa':>7}"
            f"{'sec':>7}{'bAcc/CE':>9}{'sec/CE':>8}")
    print(head)
    print("-" * len(head))
    for name, rs in rows.items():
        m = {k: float(np.mean([r[k] for r in rs])) for k in rs[0]}
        sd = float(np.std([r["all"] for r in rs]))
        print(f"{name:<25}{100 * m['all']:7.2f}{100 * sd:5.2f}{100 * m['many']:7.1f}"
              f"{100 * m['medium']:8.1f}{100 * m['few']:6.1f}{m['loma']:7.2f}{m['sec']:7.2f}"
              f"{m['all'] / base['all']:9.3f}{m['sec'] / base['sec']:8.2f}")
    ours = float(np.mean([r["all"] for r in rows["LOS eps=0.98"]]))
    peers = {k: float(np.mean([r["all"] for r in v])) for k, v in rows.items()
             if k != "LOS eps=0.98"}
    best = max(peers, key=peers.get)
    row(M, f"K=100 IR=100 mixture, seeds {seeds}: balanced accuracy", ours, peers[best],
        better="higher", unit="balanced accuracy", peer_name=f"{best} (best stage-2 peer)",
        agreement="same frozen features, stage-1 head and seeds")


if __name__ == "__main__":
    main()
