"""COX's reproduction: the unpaired claim is retired (issue 72) and says why where it ran."""

from iclr25 import claims
from iclr25.cox import claim as cox_claim


def test_unpaired_claim_retired_with_its_reason_in_the_deviations():
    assert "cox.semi_supervised_gain" in claims._CLAIMS  # the module registered its claims
    assert "cox.emergent_correspondence" not in claims._CLAIMS
    assert "cox.unpaired" not in claims._EXPERIMENTS
    for setting in (cox_claim.semi_supervised.quick, cox_claim.semi_supervised.full):
        why = [d for d in setting.deviations if "cox.emergent_correspondence" in d]
        assert len(why) == 1 and why[0].startswith("retired (issue 72)")
        assert "renaming" in why[0]  # the reason: names are not identified without pairs
