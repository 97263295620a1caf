"""GSD: one latent-conditioned policy that reproduces demonstrated styles and finds new ones.

Sreeramdass, Paleja, Chen, Gombolay, "Generalized Behavior Learning from Diverse
Demonstrations", ICLR 2025. Needs the ``rl`` extra. Environments and demonstrations are in
``iclr25.gsd.testbed`` (``LaneReach``, ``lane_demos``).
"""

from iclr25._optional import require

require("gymnasium", "rl")

from iclr25.claims import Paper  # noqa: E402
from iclr25.gsd.evaluation import (  # noqa: E402
    Evaluation,
    evaluate,
    recovery_error,
    select_behaviours,
)
from iclr25.gsd.networks import (  # noqa: E402
    BoundedDiscriminator,
    GaussianPosterior,
    LatentPolicy,
)
from iclr25.gsd.regularizer import (  # noqa: E402
    DualVariable,
    infer_demo_codes,
    infogail_reward,
    relevance_constraint,
)
from iclr25.gsd.training import (  # noqa: E402
    GSDConfig,
    GSDResult,
    gradient_penalty,
    style_coded_bc,
    train,
)

PAPER = Paper(
    number=18,
    short="gsd",
    title="Generalized Behavior Learning from Diverse Demonstrations",
    authors="Varshith Sreeramdass, Rohan Paleja, Letian Chen, Sanne van Waveren, "
            "Matthew Gombolay",
    openreview="Q7EjHroO1w",
    code="CORE-Robotics-Lab/GSD",
)

__all__ = [
    "PAPER",
    "BoundedDiscriminator",
    "DualVariable",
    "Evaluation",
    "GSDConfig",
    "GSDResult",
    "GaussianPosterior",
    "LatentPolicy",
    "evaluate",
    "gradient_penalty",
    "infer_demo_codes",
    "infogail_reward",
    "recovery_error",
    "relevance_constraint",
    "select_behaviours",
    "style_coded_bc",
    "train",
]
