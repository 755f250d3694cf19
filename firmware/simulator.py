"""A simulated table: the synthetic renderer playing a scripted game as a camera would film it.

:class:`SimulatedTable` is a :class:`~firmware.camera.Camera` whose frames show the players at
work: for every board change of the script a hand comes over the board for a while (the new piece
being put down), then the hand leaves and the new board stays in view until the next change.
Button presses of the script (pass, exchange, end...) come out of :meth:`next_action` /
:meth:`take_events` at the moment the players would press them. Time is simulated: frame ``i``
is captured at ``i / fps`` seconds, so the referee can be run faster than real time.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine import Event

from .actions import Action, MenuItem
from .camera import Camera
from .scenario import Script, Step

if TYPE_CHECKING:
    from vision.synth import Domain, Scene


@dataclass(frozen=True)
class Beat:
    """What the table shows for a while: a board, with or without a hand, for ``frames`` frames."""

    cells: dict
    hand: bool
    frames: int
    step: Step | None = None


class SimulatedTable(Camera):
    """Frames of a scripted game, rendered with one camera pose per game (``seed``) and the
    board laid a few mm off its corner marks, as players put it down. ``domain``: the ranges
    the camera, light and box are drawn from (default the nominal look); ``spp``: path-trace
    every frame at that many samples a pixel (:func:`vision.synth.traced.render_traced`, the
    board on its marks) instead of painting it. ``fresh_noise``: every frame of a scene is
    taken through the camera again with sensor noise of its own (:func:`vision.synth.photo.film`),
    as a real camera's frames are; otherwise the scene's one picture is shown again."""

    name = "simulated table"

    def __init__(
        self,
        script: Script,
        *,
        seed: int = 1,
        fps: float = 10.0,
        hand_frames: int = 4,
        still_frames: int = 8,
        size: tuple[int, int] = (1280, 960),
        domain: Domain | None = None,
        spp: int | None = None,
        fresh_noise: bool = False,
    ) -> None:
        # the renderer is imported here, only when a simulated table is asked for: it is no part
        # of the appliance's production path (a real camera)
        from vision.synth import Domain, random_board_shift, render_scene, traced
        from vision.synth.photo import film

        self._render_scene = render_scene
        self._render_traced = traced.render_traced
        self._film = film if fresh_noise else None
        self.script = script
        self.seed = seed
        self.fps = fps
        self.size = size
        self.domain = Domain.NOMINAL if domain is None else domain
        self.spp = spp
        #: the players put the board down by hand, a little off its corner marks
        self._board_shift = None if spp else random_board_shift(seed, script.game)
        self.beats: list[Beat] = []
        self._index = 0
        self._beat = 0
        self._left = 0
        self._cache: dict[tuple, Scene] = {}
        self._events: deque[Event] = deque()
        self._actions: deque[Action] = deque()
        #: simulated time of the first frame without the hand after the last move (benchmarks)
        self.hand_left_at: float | None = None
        self._last_hand = False
        self._plan(hand_frames, still_frames)
        super().__init__()

    def _plan(self, hand_frames: int, still_frames: int) -> None:
        board: dict | None = None
        for step in self.script.steps:
            if step.is_event:
                self.beats.append(Beat(board or {}, False, 1, step))
                continue
            if board is None:  # the table as it is before the first move: the start position
                self.beats.append(Beat(_empty(step.item["cells"]), False, still_frames))
            board = step.item["cells"]
            self.beats.append(Beat(board, True, hand_frames, step))
            self.beats.append(Beat(board, False, still_frames))

    @property
    def finished(self) -> bool:
        """True once every beat has been filmed."""
        return self._beat >= len(self.beats)

    @property
    def board(self) -> dict:
        """The cells (observation JSON) on the table now: the last beat's once every beat has
        been filmed."""
        return self.beats[min(self._beat, len(self.beats) - 1)].cells

    @property
    def beat(self) -> Beat | None:
        """The beat the last frame showed (None before the first frame and once finished)."""
        if self._index == 0 or self.finished:
            return None
        return self.beats[self._beat]

    @property
    def beat_shown(self) -> bool:
        """True when the last frame was the last of its beat: the next one starts the next."""
        return self._index > 0 and self._left <= 0

    @property
    def t(self) -> float:
        """The simulated time of the next frame."""
        return self._index / self.fps

    def _open(self) -> None:
        self._beat, self._left = 0, self.beats[0].frames if self.beats else 0

    def _grab(self) -> tuple[np.ndarray | None, float]:
        while not self.finished and self._left <= 0:
            self._beat += 1
            if not self.finished:
                self._left = self.beats[self._beat].frames
                self._begin(self.beats[self._beat])
        if self.finished:
            return None, self.t
        beat = self.beats[self._beat]
        if not beat.hand and self._last_hand and beat.step is None:
            self.hand_left_at = self.t  # the first clear frame after a hand
        self._last_hand = beat.hand
        self._left -= 1
        frame = self._render(beat.cells, beat.hand)
        t = self.t
        self._index += 1
        return frame, t

    def _begin(self, beat: Beat) -> None:
        if beat.step is None or not beat.step.is_event:
            return
        event = Event.from_json(beat.step.item)
        if event.name in ("pass", "exchange") and not event.data:
            # the players use the menu button: open, walk to the item, hold to choose
            target = MenuItem.PASS if event.name == "pass" else MenuItem.EXCHANGE
            steps = list(MenuItem).index(target)
            self._actions.extend([Action.MENU] * (steps + 1) + [Action.CHOOSE])
        else:
            self._events.append(event)  # typed on the simulator's keyboard (hands, counts)

    def _render(self, cells: dict, hand: bool) -> np.ndarray:
        key = (tuple(sorted((k, _key(v)) for k, v in cells.items())), hand)
        scene = self._cache.get(key)
        if scene is None:
            game, effects = self.script.game, self._film is None
            scene = (
                self._render_traced(
                    game,
                    cells,
                    self.seed,
                    domain=self.domain,
                    spp=self.spp,
                    size=self.size,
                    hand=hand,
                    effects=effects,
                )
                if self.spp
                else self._render_scene(
                    game,
                    cells,
                    self.seed,
                    size=self.size,
                    hand=hand,
                    board_shift=self._board_shift,
                    domain=self.domain,
                    effects=effects,
                )
            )
            # a beat films one scene several times over: only the last scene is kept (a real
            # camera holds one frame too, and the figure of `referee bench web` is the referee's)
            self._cache = {key: scene}
        if self._film is None:
            return scene.image
        return self._film(
            scene.image, scene.params, np.random.default_rng([self.seed, self._index])
        )

    def _release(self) -> None:
        pass

    def next_action(self) -> Action | None:
        """The next button press of the simulated players (the loop's ``actions`` callable)."""
        return self._actions.popleft() if self._actions else None

    def take_events(self) -> list[Event]:
        """Button events with data (typed on the keyboard), in order."""
        events = list(self._events)
        self._events.clear()
        return events


def _key(value: object) -> object:
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    return value


def _empty(cells: dict) -> dict:
    return dict.fromkeys(cells)
