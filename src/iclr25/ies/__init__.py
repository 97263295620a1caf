"""Instance-dependent Early Stopping (IES, Yuan et al., ICLR 2025).

Stop backpropagating a training sample once the second-order difference of its own loss
curve stays below a global threshold; keep forward-evaluating it so it can re-enter. The
paper's training recipe on in-memory tensors (for trying it out) is ``iclr25.ies.testbed``.
"""

from iclr25.claims import Paper
from iclr25.ies.sampler import IESSampler, per_sample_cross_entropy, record_losses
from iclr25.ies.stopping import InstanceEarlyStopping, LossThresholdStopping

PAPER = Paper(
    number=2,
    short="ies",
    title="Instance-dependent Early Stopping",
    authors="Suqin Yuan, Runqi Lin, Lei Feng, Bo Han, Tongliang Liu",
    arxiv="2502.07547",
    openreview="P42DbV2nuV",
    code="tmllab/2025_ICLR_IES",
)

__all__ = [
    "PAPER",
    "IESSampler",
    "InstanceEarlyStopping",
    "LossThresholdStopping",
    "per_sample_cross_entropy",
    "record_losses",
]
