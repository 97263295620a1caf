"""LSDT: one decision transformer for long- and short-range dependencies (ICLR 2025).

Wang et al., "Long-Short Decision Transformer: Bridging Global and Local Dependencies for
Generalized Decision-Making". Needs the ``rl`` extra. ξ = ``conv_ratio`` moves one model
from the Decision Transformer (0) to Decision ConvFormer (1, static convs).
"""

from iclr25._optional import require

require("gymnasium", "rl")

from iclr25.claims import Paper  # noqa: E402
from iclr25.datasets.control import pendulum_swingup  # noqa: E402
from iclr25.lsdt.evaluation import EvalResult, evaluate  # noqa: E402
from iclr25.lsdt.io import load, save  # noqa: E402
from iclr25.lsdt.model import (  # noqa: E402
    Block,
    DynamicConv1d,
    HybridFusion,
    LongShortDecisionTransformer,
    LongShortMixer,
    TokenConv1d,
    decision_convformer,
    decision_transformer,
    receptive_field,
)
from iclr25.lsdt.testbed import (  # noqa: E402
    DELAYED_CUE_ID,
    DelayedCueEnv,
    delayed_cue_dataset,
    normalized_score,
    pendulum_dataset,
)
from iclr25.lsdt.training import SequenceSampler, train  # noqa: E402

PAPER = Paper(
    number=19,
    short="lsdt",
    title="Long-Short Decision Transformer: Bridging Global and Local Dependencies for "
          "Generalized Decision-Making",
    authors="Jincheng Wang, Penny Karanasou, Pengyuan Wei, Elia Gatti, Diego Martinez Plasencia, "
            "Dimitrios Kanoulas",
    openreview="NHMuM84tRT",
    code="WangJinCheng1998/LONG-SHORT-DECISION-TRANSFORMER",
)

__all__ = [
    "DELAYED_CUE_ID",
    "PAPER",
    "Block",
    "DelayedCueEnv",
    "DynamicConv1d",
    "EvalResult",
    "HybridFusion",
    "LongShortDecisionTransformer",
    "LongShortMixer",
    "SequenceSampler",
    "TokenConv1d",
    "decision_convformer",
    "decision_transformer",
    "delayed_cue_dataset",
    "evaluate",
    "load",
    "normalized_score",
    "pendulum_dataset",
    "pendulum_swingup",
    "receptive_field",
    "save",
    "train",
]
