"""Instance-dependent Early Stopping (IES, Yuan et al., ICLR 2025).

Stop backpropagating a training sample once the second-order difference of its own loss
curve stays below a global threshold; keep forward-evaluating it so it can re-enter.
"""

from iclr25.ies.sampler import IESSampler, per_sample_cross_entropy, record_losses
from iclr25.ies.stopping import InstanceEarlyStopping, LossThresholdStopping
from iclr25.ies.training import TrainLog, accuracy, mlp, train

__all__ = [
    "IESSampler",
    "InstanceEarlyStopping",
    "LossThresholdStopping",
    "TrainLog",
    "accuracy",
    "mlp",
    "per_sample_cross_entropy",
    "record_losses",
    "train",
]
