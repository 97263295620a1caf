"""LoCoDL: federated training with local steps and compressed uplink, exact and doubly
accelerated (Condat, Maranjyan, Richtárik, ICLR 2025)."""

from iclr25.claims import Paper
from iclr25.locodl.algorithms import Run, adiana, adiana_params, diana, gd, locodl, scaffnew
from iclr25.locodl.comm import DistributedComm, SimulatedComm
from iclr25.locodl.compressors import (
    ComposedCompressor,
    Compressor,
    Identity,
    Natural,
    RandK,
    make_compressor,
)
from iclr25.locodl.estimator import LoCoDLClassifier
from iclr25.locodl.objectives import ClientLogistic, ClientRidge

PAPER = Paper(
    number=9,
    short="locodl",
    title="LoCoDL: Communication-Efficient Distributed Learning with Local Training and "
          "Compression",
    authors="Laurent Condat, Artavazd Maranjyan, Peter Richtárik",
    arxiv="2403.04348",
    openreview="PpYy0dR3Qw",
)

__all__ = [
    "PAPER", "ClientLogistic", "ClientRidge", "ComposedCompressor", "Compressor", "DistributedComm",
    "Identity", "LoCoDLClassifier", "Natural", "RandK", "Run", "SimulatedComm", "adiana",
    "adiana_params", "diana", "gd", "locodl", "make_compressor", "scaffnew",
]
