"""Solvers over (GameTree, InfosetMap): CFR family, fictitious play, sequence-form LP, best response."""

from efgkit.solvers.best_response import BestResponse, Evaluation, evaluate, nash_conv
from efgkit.solvers.cfr import (
    CFRPlusSolver,
    CFRSolver,
    DCFRPlusSolver,
    DCFRSolver,
    HSDCFRSolver,
    HSPCFRPlusSolver,
    LinearCFRSolver,
    PCFRPlusSolver,
    PDCFRPlusSolver,
)
from efgkit.solvers.fictitious_play import FictitiousPlay
from efgkit.solvers.sequence_form_lp import SequenceFormLP, SequenceFormSolution
from efgkit.solvers.strategy import Strategy

__all__ = [
    "BestResponse", "CFRPlusSolver", "CFRSolver", "DCFRPlusSolver", "DCFRSolver", "HSDCFRSolver",
    "HSPCFRPlusSolver", "LinearCFRSolver",
    "PCFRPlusSolver", "PDCFRPlusSolver", "Evaluation", "FictitiousPlay",
    "SequenceFormLP", "SequenceFormSolution", "Strategy", "evaluate", "nash_conv",
]
