import math

import pytest

from iclr25 import claims
from iclr25.claims import Scale

IDS = ["crh.backward_alignment", "crh.increases_with_weight_decay", "crh.backward_above_null"]


@pytest.mark.parametrize("cid", IDS)
def test_quick_claim_runs(cid, tmp_path):
    r = claims.run(claims.discover()[cid], Scale.quick, 0, tmp_path)
    assert r.status != "error", r.error
    assert math.isfinite(r.measured)
    assert r.figures and all(p.endswith(".png") for p in r.figures)
