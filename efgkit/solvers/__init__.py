"""Solvers over (GameTree, InfosetMap): CFR family, fictitious play, sequence-form LP, best response."""

from efgkit.solvers.best_response import BestResponse, Evaluation, evaluate, nash_conv
from efgkit.solvers.cfr import CFRPlusSolver, CFRSolver, DCFRSolver
from efgkit.solvers.fictitious_play import FictitiousPlay
from efgkit.solvers.sequence_form_lp import SequenceFormLP, SequenceFormSolution
from efgkit.solvers.strategy import Strategy

__all__ = [
    "BestResponse", "CFRPlusSolver", "CFRSolver", "DCFRSolver", "Evaluation", "FictitiousPlay",
    "SequenceFormLP", "SequenceFormSolution", "Strategy", "evaluate", "nash_conv",
]
