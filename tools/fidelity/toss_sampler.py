"""ToSS testbed fixture: the multivariate sampler of vita-epfl/TIC-TAC
(``Multivariate/sampler.py:Sampling``), which ToSS re-uses for its multivariate experiment and
iclr25 re-implements on a torch Generator (``toss.testbed.make_heteroscedastic``).

Official class run unchanged (``PATH/Multivariate`` on ``sys.path``), numpy's global seed 0,
in_dim = out_dim = 3, 40 samples. Stored: its draws of the distribution's parameters (the
joint mean ``mean`` and correlation ``sigma_corr`` over (y, x), the noise correlation
``z_sigma``), its inputs ``x`` and what it derives from them: E[y|x] (``y_mean``) and Σ(x)
(``q_covariance``). The random streams differ (numpy vs torch), so the test feeds the
official parameters and inputs to iclr25's conditional moments and checks the input box.

    python tools/fidelity/toss_sampler.py --official /path/to/TIC-TAC
"""

import sys

import numpy as np
from _common import commit, parse, save

args = parse(__doc__)
sys.path.insert(0, str(args.official / "Multivariate"))
from sampler import Sampling  # noqa: E402

np.random.seed(0)
s = Sampling(in_dim=3, out_dim=3, num_samples=40)
save(args.out, "toss_sampler", commit(args.official), mean=s.mean,
     sigma_corr=np.asarray(s.sigma_corr), z_sigma=s.z_sigma, x=s.samples["x"],
     y_mean=s.samples["y_mean"], q_covariance=s.samples["q_covariance"])
