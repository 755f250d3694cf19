"""How far a rendered scene may stray from the nominal look: the ranges of the randomisation.

``Domain.NOMINAL`` is the benchmark corpus's own look (it renders exactly the scenes it always
has). ``Domain.TRAIN`` widens every range for fitting the readers' models, ``Domain.HELDOUT``
draws from other ranges again (never used for fitting or tuning) to judge them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class Domain:
    """Ranges of the scene randomisation; the defaults are the nominal corpus."""

    name: str = "nominal"
    #: camera distance as a multiple of the closest that keeps markers and board in view
    zoom: tuple[float, float] = (1.0, 1.15)
    #: largest camera tilt from the board's normal (degrees; upright boards at most 30)
    max_tilt_deg: float = 35.0

    NOMINAL: ClassVar[Domain]
    TRAIN: ClassVar[Domain]
    HELDOUT: ClassVar[Domain]


Domain.NOMINAL = Domain()
Domain.TRAIN = Domain(name="train", zoom=(1.0, 1.8), max_tilt_deg=40.0)
Domain.HELDOUT = Domain(name="heldout", zoom=(1.0, 1.8), max_tilt_deg=40.0)
