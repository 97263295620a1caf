"""The pilot's rule (issue 72) on a pilot whose measurements are given: the cheapest passing
point within budget is chosen, the control is read before Cross trains, nothing over budget
is trained, and with no passing point the setting stays as it was."""

import pytest

from iclr25.comm import pilot as P

GOOD = {"shape": 0.95, "texture": 0.6, "color": 0.99}
BAD = {"shape": 0.95, "texture": 0.3, "color": 0.99}


class FakePilot(P.Pilot):
    """Costs grow with the pairs and the control epochs; the control passes from
    ``pass_from`` pairs at 20 epochs, on every seed but ``bad_seed``; Cross learns by
    ``margin`` except with crop floor 0.08."""

    def __init__(self, pass_from=4000, bad_seed=None, margin=0.2):
        super().__init__(seeds=(7, 8, 9), log=lambda _: None)
        self.pass_from, self.bad_seed, self.margin = pass_from, bad_seed, margin
        self.calls = []

    def measure(self):
        pass

    def projected_s(self, n, w, control_epochs, steps):
        return n / 100 + control_epochs + steps / 100 + (50 if w[-1] == 16 else 0)

    def control_reads(self, n, w, seed, max_epochs):
        self.calls.append(("control", n, w, seed))
        ok = n >= self.pass_from and seed != self.bad_seed
        return {e: GOOD if ok and e >= 20 else BAD for e in P.CONTROL_EPOCHS}

    def cross_R(self, n, w, floor, jitter, seed):
        self.calls.append(("cross", n, w, floor, jitter, seed))
        r = 0.4 + (0.05 if floor == 0.08 else self.margin)
        return {P.arm_epochs(n, s): r for s in P.ARM_STEPS}, 0.4


@pytest.fixture
def small_grid(monkeypatch):
    monkeypatch.setattr(P, "N_PAIRS", (2000, 4000, 8000))
    monkeypatch.setattr(P, "WIDTHS", ((8, 8), (8, 16)))
    monkeypatch.setattr(P, "CONTROL_EPOCHS", (10, 20))
    monkeypatch.setattr(P, "ARM_STEPS", (124, 248))
    monkeypatch.setattr(P, "CROP_FLOORS", (0.08, 0.3))
    monkeypatch.setattr(P, "JITTER", (True, False))


def test_the_cheapest_passing_point_is_chosen_and_cross_trains_only_after_the_control(
        small_grid):
    pilot = FakePilot()
    rows = P.run(pilot)
    pick, ok = P.choose(rows)
    assert ok and rows[-1]["passes"] and sum(r["passes"] for r in rows) == 1
    # 4000 pairs, 20 control epochs, the narrow encoder, the cheaper arm steps; crop 0.08
    # fails Cross's margin, so the next augmentation in the grid's order is taken
    assert (pick.n_pretrain, pick.control_epochs, pick.widths, pick.epochs,
            pick.crop_floor, pick.jitter) == (4000, 20, (8, 8), 2, 0.3, True)
    # costs never decrease along the table, and every row is within the budget
    costs = [r["projected_s"] for r in rows]
    assert costs == sorted(costs) and all(r["projected_s"] <= r["budget_s"] for r in rows)
    # Cross trains only where every seed's control passed
    assert all(c[1] >= 4000 for c in pilot.calls if c[0] == "cross")
    # a control failing on the first seed is not run on the others
    assert not any(c[0] == "control" and c[1] == 2000 and c[3] != 7 for c in pilot.calls)


def test_the_budget_is_twice_todays_setting_and_bars_dearer_points(small_grid):
    pilot = FakePilot(pass_from=8000)
    budget = P.budget_s(pilot)
    assert budget == pytest.approx(2 * pilot.projected_s(2000, (32, 64, 64), 10, 125))
    rows = P.run(pilot)
    # 8000 pairs cost 80 + 20 + 1.24 > 2 x 31.25: never trained, and no point passes
    assert not any(c[1] == 8000 for c in pilot.calls)
    assert P.choose(rows) == (P.BASE, False)


def test_one_failing_seed_fails_the_point(small_grid):
    pilot = FakePilot(bad_seed=9)
    rows = P.run(pilot)
    assert not any(r["passes"] for r in rows)
    assert not any(c[0] == "cross" for c in pilot.calls)
    assert P.choose(rows) == (P.BASE, False)
    assert "no" in P.table(rows).splitlines()[1]


def test_arm_epochs_are_the_nearest_whole_epochs():
    assert [P.arm_epochs(n, 124) for n in (2000, 4000, 8000, 12000)] == [4, 2, 1, 1]
    assert P.arm_epochs(2000, 248) == 8


def test_the_control_curve_reads_each_budget_as_its_own_run(one_thread):
    from iclr25.comm.claim import pair_sets, supervised, supervised_curve

    s = P.replace(P.BASE, n_pretrain=64, n_test=64)
    data, _, test = pair_sets(s, 0, P.torch.device("cpu"))
    curve = supervised_curve(data, test, epochs=(1, 2), seed=3, widths=(8, 8))
    assert set(curve) == {1, 2}
    for e in (1, 2):
        assert curve[e] == supervised(data, test, epochs=e, seed=3, widths=(8, 8))
    # stop() ends the run before the next epoch is trained
    assert set(supervised_curve(data, test, epochs=(1, 2), seed=3, widths=(8, 8),
                                stop=lambda e: e == 2)) == {1}


def test_jitter_off_leaves_colours_as_they_are():
    import torch

    from iclr25.comm.claim import _augment

    x = torch.zeros(16, 3, 32, 32)
    x[:, 0] = 0.8  # one flat colour: a crop and a flip cannot change it
    for jitter, same in ((False, True), (True, False)):
        v = _augment(0.08, jitter)[0](x, seed=0)
        assert torch.allclose(v, x, atol=1e-6) == same
    assert torch.equal(x[:, 0], torch.full((16, 32, 32), 0.8))  # the input is untouched
