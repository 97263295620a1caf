"""The scale of a reproduction run, apart from ``claims`` so the CLI can parse it without torch."""

from __future__ import annotations

import enum


class Scale(str, enum.Enum):
    """How large a reproduction run is: ``quick`` (seconds, tests/CI) or ``full`` (minutes)."""

    quick = "quick"
    full = "full"

    @property
    def default_draws(self) -> int:
        """Draws per experiment when none are asked for: 3 at full scale, 1 at quick (a smoke
        test)."""
        return 1 if self is Scale.quick else 3


#: the most draws a run may ask for: draw d runs at seed + 400,000 d, and experiments that
#: multiply their seed by 1000 hand it to 32-bit seeds (scikit-learn) below 2**32 up to d = 9
MAX_DRAWS = 10
