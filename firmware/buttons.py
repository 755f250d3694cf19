"""The three push buttons, and the buzzer and LED that flag an illegal placement (gpiozero).

:class:`Buttons` turns presses into :class:`~firmware.actions.Action` values on a thread-safe
queue the referee loop reads with :meth:`Buttons.read`: CONFIRM and UNDO on press, and on the menu
button MENU for a short press or CHOOSE once it has been held ``hold_time`` seconds. Each button
connects its pin to ground (internal pull-up), as in ``hardware/wiring.md``.

Every class takes gpiozero's ``pin_factory``: ``None`` for the real pins, or
``gpiozero.pins.mock.MockFactory()`` off the Pi (tests, simulator).
"""

from __future__ import annotations

import queue

from gpiozero import LED, Button, Buzzer, TonalBuzzer
from gpiozero.pins import Factory

from .actions import Action
from .config import ButtonsConfig, BuzzerConfig, LedConfig

#: Seconds of each beep and of each silence between beeps, and the number of beeps.
BEEP_SECONDS = 0.12
BEEPS = 3
#: TonalBuzzer value of the beep: -1 is one octave under its middle tone (A3, 220 Hz).
LOW_TONE = -1.0


class Buttons:
    """Confirm, undo and menu buttons on BCM pins; actions come out of :meth:`read`."""

    def __init__(
        self,
        confirm: int,
        undo: int,
        menu: int,
        *,
        hold_time: float = 1.5,
        bounce_time: float | None = 0.05,
        pin_factory: Factory | None = None,
    ) -> None:
        self._actions: queue.SimpleQueue[Action] = queue.SimpleQueue()
        self._menu_held = False
        bounce = bounce_time or None
        self.confirm = Button(confirm, bounce_time=bounce, pin_factory=pin_factory)
        self.undo = Button(undo, bounce_time=bounce, pin_factory=pin_factory)
        self.menu = Button(menu, bounce_time=bounce, hold_time=hold_time, pin_factory=pin_factory)
        self.confirm.when_pressed = lambda: self._actions.put(Action.CONFIRM)
        self.undo.when_pressed = lambda: self._actions.put(Action.UNDO)
        self.menu.when_pressed = self._menu_pressed
        self.menu.when_held = self._menu_was_held
        self.menu.when_released = self._menu_released

    @classmethod
    def from_config(cls, config: ButtonsConfig, pin_factory: Factory | None = None) -> Buttons:
        """The buttons of the ``[buttons]`` configuration section."""
        return cls(
            config.confirm,
            config.undo,
            config.menu,
            hold_time=config.hold_seconds,
            bounce_time=config.bounce_seconds,
            pin_factory=pin_factory,
        )

    def read(self, timeout: float | None = 0.0) -> Action | None:
        """The next action; waits up to ``timeout`` seconds (``None``: forever, 0: not at all)."""
        try:
            if timeout == 0:
                return self._actions.get_nowait()
            return self._actions.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        """Release the pins."""
        for button in (self.confirm, self.undo, self.menu):
            button.close()

    def __enter__(self) -> Buttons:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _menu_pressed(self) -> None:
        self._menu_held = False

    def _menu_was_held(self) -> None:
        self._menu_held = True
        self._actions.put(Action.CHOOSE)

    def _menu_released(self) -> None:
        if not self._menu_held:
            self._actions.put(Action.MENU)


class Alarm:
    """Flags an illegal placement: a few beeps and a blinking LED until :meth:`clear`.

    Both parts are optional (``None`` pin). An "active" buzzer sounds by itself when powered
    (gpiozero ``Buzzer``); a "tonal" one is a passive piezo played by PWM (``TonalBuzzer``).
    """

    def __init__(
        self,
        buzzer: int | None = None,
        led: int | None = None,
        *,
        tonal: bool = False,
        pin_factory: Factory | None = None,
    ) -> None:
        self.buzzer: Buzzer | TonalBuzzer | None = None
        # the buzzer's value while it sounds and while it is silent
        self._sound, self._silence = (LOW_TONE, None) if tonal else (1, 0)
        if buzzer is not None:
            kind = TonalBuzzer if tonal else Buzzer
            self.buzzer = kind(buzzer, pin_factory=pin_factory)
            self.buzzer.source_delay = BEEP_SECONDS
        self.led = LED(led, pin_factory=pin_factory) if led is not None else None

    @classmethod
    def from_config(
        cls, buzzer: BuzzerConfig, led: LedConfig, pin_factory: Factory | None = None
    ) -> Alarm:
        """The alarm of the ``[buzzer]`` and ``[led]`` configuration sections."""
        return cls(
            buzzer.pin if buzzer.enabled else None,
            led.pin if led.enabled else None,
            tonal=buzzer.kind == "tonal",
            pin_factory=pin_factory,
        )

    def illegal(self) -> None:
        """Beep (in the background) and start blinking the LED."""
        if self.buzzer is not None:
            self.buzzer.source = iter([self._sound, self._silence] * BEEPS)
        if self.led is not None:
            self.led.blink(on_time=0.25, off_time=0.25)

    def clear(self) -> None:
        """Silence the buzzer and switch the LED off (the board is legal again)."""
        if self.buzzer is not None:
            self.buzzer.source = None
            self.buzzer.value = self._silence
        if self.led is not None:
            self.led.off()

    def close(self) -> None:
        """Release the pins."""
        for device in (self.buzzer, self.led):
            if device is not None:
                device.close()

    def __enter__(self) -> Alarm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
