"""What the 128x64 OLED shows: every screen as a pure 1-bit PIL image, no device involved.

Each function returns a :class:`Screen`: the image, every text drawn on it with its bounding box
(so a simulator can print the screen, and tests can check nothing overflows), and whether the
display should flash it. Long names and reasons are wrapped and ellipsized to fit; any screen
can carry a status line at the bottom (``status="camera lost, retry 2"``).

The font is Pillow's own (``ImageFont.load_default``, Aileron Regular, scalable), so nothing is
downloaded; text is drawn without anti-aliasing, as a 1-bit OLED shows it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from PIL import Image, ImageDraw, ImageFont

from engine import DRAW

WIDTH, HEIGHT = 128, 64
MARGIN = 2
STATUS_HEIGHT = 11
HEADER_HEIGHT = 13
ELLIPSIS = "…"
DOT = "·"
#: Sizes (pixels) of the fonts: small print, body text, headings, and the range of big digits.
TINY, SMALL, BODY, HEADING = 9, 10, 11, 16
BIG_SIZES = range(40, 11, -2)
#: Width of the name beside each score when four players share the screen.
GRID_NAME = 22

#: Pixel values of a 1-bit image: a lit and a dark OLED pixel.
ON, OFF = 255, 0

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Screen:
    """One screen: a 1-bit 128x64 image and the texts on it (``texts``: text, bounding box)."""

    image: Image.Image
    texts: tuple[tuple[str, Box], ...]
    blink: bool = False

    @property
    def text(self) -> str:
        """The screen's texts, one per line, top to bottom (for a terminal simulator)."""
        return "\n".join(text for text, _ in sorted(self.texts, key=lambda t: (t[1][1], t[1][0])))


@cache
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's default font at ``size`` pixels."""
    return ImageFont.load_default(size)


def plain(text: str) -> str:
    """``text`` in the characters the font has: accents dropped, other symbols as ``?``."""
    out = []
    for char in unicodedata.normalize("NFKD", " ".join(str(text).split())):
        if unicodedata.combining(char):
            continue
        out.append(char if " " <= char <= "~" or char in (ELLIPSIS, DOT) else "?")
    return "".join(out)


def _spaced(text: str) -> str:
    """Aileron's space is 2 pixels wide on a 1-bit screen: words read better 4 pixels apart."""
    return text.replace(" ", "  ")


_MEASURE = ImageDraw.Draw(Image.new("1", (1, 1)))


def text_width(text: str, size: int) -> float:
    """Width in pixels of ``text`` at ``size``, as drawn on a 1-bit image (no anti-aliasing)."""
    return _MEASURE.textlength(_spaced(text), font=font(size))


def _prefix(text: str, size: int, width: float, suffix: str = "") -> int:
    """The length of the longest prefix of ``text`` that fits ``width`` followed by ``suffix``."""
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if text_width(text[:mid].rstrip() + suffix, size) <= width:
            low = mid
        else:
            high = mid - 1
    return low


def ellipsize(text: str, size: int, width: float) -> str:
    """``text`` cut with an ellipsis so that it fits in ``width`` pixels at ``size``."""
    text = plain(text)
    if text_width(text, size) <= width:
        return text
    keep = _prefix(text, size, width, ELLIPSIS)
    return text[:keep].rstrip() + ELLIPSIS if keep else ""


def wrap(text: str, size: int, width: float, max_lines: int) -> list[str]:
    """``text`` in at most ``max_lines`` lines of ``width`` pixels; the last one ellipsized."""
    lines: list[str] = []
    line = ""
    for word in plain(text).split():
        if text_width(f"{line} {word}".strip(), size) <= width:
            line = f"{line} {word}".strip()
            continue
        if line:
            lines.append(line)
        while text_width(word, size) > width:  # a word longer than a line is cut
            cut = max(1, _prefix(word, size, width))
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    if line:
        lines.append(line)
    if len(lines) > max_lines:
        rest = " ".join(lines[max_lines - 1 :])
        lines = [*lines[: max_lines - 1], ellipsize(rest + " " + ELLIPSIS, size, width)]
    return lines


def ink(text: str, size: int, bold: bool = False) -> Box:
    """The box ``text`` covers when drawn at (0, 0) on its baseline (anchor ``ls``)."""
    x0, y0, x1, y1 = _MEASURE.textbbox((0, 0), _spaced(plain(text)), font=font(size), anchor="ls")
    return int(x0), int(y0), int(x1) + bold, int(y1)


def largest_size(
    texts: Sequence[str], width: float, height: float, sizes: range = BIG_SIZES, bold: bool = True
) -> int:
    """The biggest of ``sizes`` at which every text fits in ``width`` x ``height``."""
    for size in sizes:
        boxes = [ink(text, size, bold) for text in texts]
        if all(x1 - x0 <= width and y1 - y0 <= height for x0, y0, x1, y1 in boxes):
            return size
    return sizes[-1]


class _Canvas:
    """A screen being drawn: records each text and its box; ``status`` reserves the bottom."""

    def __init__(self, status: str | None = None, inverted: bool = False) -> None:
        self.paper, self.ink = (ON, OFF) if inverted else (OFF, ON)
        self.image = Image.new("1", (WIDTH, HEIGHT), self.paper)
        self.draw = ImageDraw.Draw(self.image)
        self.texts: list[tuple[str, Box]] = []
        self.bottom = HEIGHT
        if status:
            self.bottom = HEIGHT - STATUS_HEIGHT
            self.draw.rectangle((0, self.bottom + 1, WIDTH - 1, HEIGHT - 1), fill=self.ink)
            self.text((WIDTH // 2, HEIGHT - 5), status, TINY, anchor="mm", fill=self.paper)

    def text(
        self,
        xy: tuple[float, float],
        text: str,
        size: int,
        *,
        anchor: str = "lm",
        width: float | None = None,
        fill: int | None = None,
        bold: bool = False,
    ) -> Box:
        """Draw ``text`` ellipsized to ``width`` (default: the screen less the margins).

        ``bold`` draws it twice, one pixel apart: thicker strokes that stay crisp."""
        text = ellipsize(text, size, (width or WIDTH - 2 * MARGIN) - bold)
        if not text:
            return (int(xy[0]), int(xy[1]), int(xy[0]), int(xy[1]))
        colour = self.ink if fill is None else fill
        x0, y0, x1, y1 = self.draw.textbbox(xy, _spaced(text), font=font(size), anchor=anchor)
        for dx in range(1 + bold):
            at = (xy[0] + dx, xy[1])
            self.draw.text(at, _spaced(text), font=font(size), anchor=anchor, fill=colour)
        box = (int(x0), int(y0), int(x1) + bold, int(y1))
        self.texts.append((text, box))
        return box

    def centred(self, area: Box, text: str, size: int, *, bold: bool = False) -> Box:
        """Draw ``text`` ellipsized to ``area``'s width, its box centred in ``area``."""
        text = ellipsize(text, size, area[2] - area[0] - bold)
        x0, y0, x1, y1 = ink(text, size, bold)
        x = round((area[0] + area[2] - x0 - x1) / 2)
        y = round((area[1] + area[3] - y0 - y1) / 2)
        return self.text((x, y), text, size, anchor="ls", width=area[2] - area[0], bold=bold)

    def header(self, title: str, right: str = "") -> None:
        """An inverted title bar across the top, with an optional right-aligned note."""
        self.draw.rectangle((0, 0, WIDTH - 1, HEADER_HEIGHT - 1), fill=self.ink)
        note = 0
        if right:
            box = self.text((WIDTH - MARGIN, 6), right, SMALL, anchor="rm", fill=self.paper)
            note = box[2] - box[0] + 4
        self.text((MARGIN, 6), title, BODY, width=WIDTH - 2 * MARGIN - note, fill=self.paper)

    def lines(self, lines: Sequence[str], top: int, size: int, pitch: int) -> None:
        """Centred lines from ``top``, ``pitch`` pixels apart."""
        for i, line in enumerate(lines):
            self.text((WIDTH // 2, top + i * pitch + pitch // 2), line, size, anchor="mm")

    def screen(self, blink: bool = False) -> Screen:
        return Screen(self.image, tuple(self.texts), blink)


def _scores(scores: Mapping[str, int]) -> str:
    return f" {DOT} ".join(f"{player} {score}" for player, score in scores.items())


def _changes(change: Mapping[str, int]) -> str:
    return f" {DOT} ".join(f"{player} {delta:+d}" for player, delta in change.items())


# --------------------------------------------------------------------------- the screens
def menu(title: str, choices: Sequence[str], index: int, *, status: str | None = None) -> Screen:
    """A menu (the game selection, the main menu...): the choice ``index`` highlighted."""
    canvas = _Canvas(status)
    canvas.header(title, f"{index + 1}/{len(choices)}")
    footer = canvas.bottom - 6
    canvas.text((WIDTH // 2, footer), f"tap: next {DOT} hold: choose", TINY, anchor="mm")
    pitch = 13
    rows = max(1, (footer - 5 - HEADER_HEIGHT - 1) // pitch)
    first = min(max(0, index - rows // 2), max(0, len(choices) - rows))
    for row, i in enumerate(range(first, min(first + rows, len(choices)))):
        y = HEADER_HEIGHT + 1 + row * pitch
        colour = canvas.ink
        if i == index:
            canvas.draw.rounded_rectangle((0, y, WIDTH - 1, y + pitch - 1), 3, fill=canvas.ink)
            colour = canvas.paper
        canvas.text((MARGIN + 4, y + pitch // 2), choices[i], BODY, fill=colour, width=WIDTH - 12)
    return canvas.screen()


def scoreboard(
    scores: Mapping[str, int], to_move: str | None, *, status: str | None = None
) -> Screen:
    """Whose turn it is and every score in big digits; the player to move is highlighted.

    One or two players get a column each, names under the scores; three or four a quarter of
    the screen each, names left of the scores."""
    canvas = _Canvas(status)
    canvas.header(f"{to_move} to play" if to_move else "scores")
    top, count = HEADER_HEIGHT + 1, len(scores)
    if count <= 2:
        width = WIDTH // max(1, count)
        cells = [(i * width, top, (i + 1) * width, canvas.bottom) for i in range(count)]
        digits = (width - 6, canvas.bottom - top - 16)
    else:
        height = (canvas.bottom - top) // 2
        cells = [
            (
                i % 2 * WIDTH // 2,
                top + i // 2 * height,
                (i % 2 + 1) * WIDTH // 2,
                top + (i // 2 + 1) * height,
            )
            for i in range(count)
        ]
        digits = (WIDTH // 2 - GRID_NAME - 5, height - 3)
        canvas.draw.line((WIDTH // 2, top + 2, WIDTH // 2, canvas.bottom - 3), fill=canvas.ink)
    size = largest_size([str(score) for score in scores.values()], *digits)
    for (player, score), cell in zip(scores.items(), cells, strict=False):
        _score(canvas, cell, player, score, size, player == to_move, stacked=count <= 2)
    return canvas.screen()


def _score(
    canvas: _Canvas, cell: Box, player: str, score: int, size: int, turn: bool, stacked: bool
) -> None:
    """One player's score in ``cell``: the name under it (``stacked``) or on its left."""
    x0, y0, x1, y1 = cell
    if stacked:
        name = (x0 + 1, y1 - 13, x1 - 2, y1 - 1)
        digits = (x0 + 1, y0 + 1, x1 - 1, y1 - 14)
    else:
        name = (x0 + 1, (y0 + y1) // 2 - 6, x0 + GRID_NAME, (y0 + y1) // 2 + 6)
        digits = (x0 + GRID_NAME + 2, y0 + 1, x1 - 2, y1 - 1)
    canvas.centred(digits, str(score), size, bold=True)
    colour = canvas.ink
    if turn:
        canvas.draw.rounded_rectangle(name, 3, fill=canvas.ink)
        colour = canvas.paper
    centre = ((name[0] + name[2]) / 2, (name[1] + name[3]) / 2)
    canvas.text(centre, player, SMALL, anchor="mm", fill=colour, width=name[2] - name[0] - 2)


def last_move(
    player: str | None,
    move: str,
    score_change: Mapping[str, int],
    *,
    status: str | None = None,
) -> Screen:
    """The move just accepted, as big as it fits, and the points it scored."""
    canvas = _Canvas(status)
    canvas.header(f"{player} played" if player else "last move")
    bottom_line = canvas.bottom - 7
    area = (MARGIN, HEADER_HEIGHT + 2, WIDTH - MARGIN, bottom_line - 7)
    room = area[3] - area[1]
    size = largest_size([move], area[2] - area[0], room, range(24, BODY - 1, -1), bold=False)
    if text_width(plain(move), size) <= area[2] - area[0]:
        canvas.centred(area, move, size)
    else:
        lines = wrap(move, BODY, WIDTH - 2 * MARGIN, max(1, room // 12))
        canvas.lines(lines, HEADER_HEIGHT + (room - 12 * len(lines)) // 2 + 1, BODY, 12)
    gained = _changes(score_change) or "no points"
    canvas.text((WIDTH // 2, bottom_line), gained, BODY, anchor="mm")
    return canvas.screen()


def illegal(
    reason: str,
    cells: Sequence[str] = (),
    *,
    status: str | None = None,
    offer: str | None = None,
) -> Screen:
    """ILLEGAL, why, the cells to put right and, when given, the ``offer`` of a button ("OK if
    it was 5@b2": vision may have misread a legal move): inverted, and flashed by the display."""
    return _flagged("ILLEGAL", reason, cells, status=status, offer=offer, blink=True)


def check_board(reason: str, cells: Sequence[str] = (), *, status: str | None = None) -> Screen:
    """CHECK BOARD before play: why the board is not set up for the game, the cells to put
    right, and "OK if set up" (vision may have misread it): inverted, not flashed."""
    return _flagged("CHECK BOARD", reason, cells, status=status, offer="OK if set up", blink=False)


def _flagged(
    title: str,
    reason: str,
    cells: Sequence[str],
    *,
    status: str | None,
    offer: str | None,
    blink: bool,
) -> Screen:
    """``title``, the reason, the cells to fix and the offer, inverted in a frame."""
    canvas = _Canvas(status, inverted=True)
    canvas.draw.rectangle((0, 0, WIDTH - 1, canvas.bottom - 1), outline=canvas.ink, width=2)
    canvas.text((WIDTH // 2, 10), title, HEADING, anchor="mm", bold=True)
    offer_y = canvas.bottom - 8
    fix_y = offer_y - 11 if offer else offer_y
    lowest = fix_y if cells else (offer_y if offer else None)
    top, bottom = 19, (lowest - 6 if lowest is not None else canvas.bottom - 3)
    lines = wrap(reason, TINY, WIDTH - 8, max(1, (bottom - top) // 10))
    canvas.lines(lines, top + (bottom - top - 10 * len(lines)) // 2, TINY, 10)
    if cells:
        canvas.text((WIDTH // 2, fix_y), _cells(cells, WIDTH - 8), SMALL, anchor="mm", bold=True)
    if offer:
        canvas.text((WIDTH // 2, offer_y), offer, TINY, anchor="mm", width=WIDTH - 8)
    return canvas.screen(blink=blink)


def _cells(cells: Sequence[str], width: float) -> str:
    """``fix a1 b2 +3``: as many cells as fit in ``width`` in bold small print."""
    for shown in range(len(cells), 0, -1):
        more = f" +{len(cells) - shown}" if shown < len(cells) else ""
        text = plain("fix " + " ".join(cells[:shown]) + more)
        if text_width(text, SMALL) + 1 <= width:  # bold is one pixel wider
            return text
    return f"fix {len(cells)} cells"


def board_not_found(
    hint: str = "Check the 4 corner markers are in view and lit", *, status: str | None = None
) -> Screen:
    """The camera sees no board, with a hint how to fix it."""
    canvas = _Canvas(status)
    canvas.draw.rectangle((0, 0, WIDTH - 1, canvas.bottom - 1), outline=canvas.ink)
    for x, y in ((4, 4), (WIDTH - 11, 4)):  # two corner markers, as the board's look
        canvas.draw.rectangle((x, y, x + 6, y + 6), fill=canvas.ink)
        canvas.draw.rectangle((x + 2, y + 2, x + 4, y + 4), fill=canvas.paper)
    canvas.text((WIDTH // 2, 9), "NO BOARD", HEADING, anchor="mm", bold=True, width=WIDTH - 34)
    room = canvas.bottom - 22
    lines = wrap(hint, SMALL, WIDTH - 8, max(1, room // 11))
    canvas.lines(lines, 20 + (room - 11 * len(lines)) // 2, SMALL, 11)
    return canvas.screen()


def hand_over_board(*, status: str | None = None, still: bool = False) -> Screen:
    """Something (a hand) hides the board: the referee waits for it to clear. ``still``: the
    board is still and vision still finds something over it: OK says that it is clear."""
    canvas = _Canvas(status)
    top = max(4 - 3 * still, (canvas.bottom - 50) // 2)  # the hint must fit above a status line
    x, y = 6, top + 4  # an hourglass
    canvas.draw.polygon([(x, y), (x + 18, y), (x + 9, y + 14)], outline=canvas.ink)
    canvas.draw.polygon([(x + 9, y + 14), (x, y + 28), (x + 18, y + 28)], fill=canvas.ink)
    canvas.draw.line((x - 2, y, x + 20, y), fill=canvas.ink, width=2)
    canvas.draw.line((x - 2, y + 28, x + 20, y + 28), fill=canvas.ink, width=2)
    text_x = 34 + (WIDTH - 34) // 2
    canvas.text((text_x, top + 10), "HAND OVER", BODY + 2, anchor="mm", bold=True, width=90)
    canvas.text((text_x, top + 25), "THE BOARD", BODY + 2, anchor="mm", bold=True, width=90)
    if still:
        canvas.text(
            (WIDTH // 2, min(top + 42, canvas.bottom - 6)),
            "OK if it is clear",
            SMALL,
            anchor="mm",
            bold=True,
        )
    elif canvas.bottom - (top + 40) >= 10:
        canvas.text((WIDTH // 2, top + 42), "waiting until it is still", SMALL, anchor="mm")
    return canvas.screen()


def confirm(
    first: str,
    second: str,
    *,
    first_key: str = "OK",
    second_key: str = "MENU",
    question: str = "Which move?",
    status: str | None = None,
    more: bool = False,
) -> Screen:
    """Two close explanations of the board, each with the button that picks it, and what UNDO
    does: "neither", or "others" (``more``: the next two explanations)."""
    canvas = _Canvas(status)
    canvas.header(question)
    footer = canvas.bottom - 6
    pitch = (footer - 6 - HEADER_HEIGHT) // 2
    badge = max(text_width(plain(k), TINY) for k in (first_key, second_key)) + 6
    for row, (key, text) in enumerate(((first_key, first), (second_key, second))):
        y = HEADER_HEIGHT + 1 + row * pitch + pitch // 2
        canvas.draw.rounded_rectangle((MARGIN, y - 6, MARGIN + badge, y + 5), 2, fill=canvas.ink)
        canvas.text(
            (MARGIN + badge / 2 + 1, y), key, TINY, anchor="mm", fill=canvas.paper, width=badge
        )
        left = MARGIN + badge + 4
        canvas.text((left, y), text, BODY, width=WIDTH - left - MARGIN)
    canvas.text((WIDTH // 2, footer), f"UNDO: {'others' if more else 'neither'}", TINY, anchor="mm")
    return canvas.screen()


def doubt(legal: str, cells: Sequence[str], *, status: str | None = None) -> Screen:
    """The "What was done?" question: the ``legal`` explanation of the board (a move, or "no
    move") against an illegal act on ``cells`` vision doubts (the first cell, and how many
    more)."""
    more = f" +{len(cells) - 1}" if len(cells) > 1 else ""
    return confirm(legal, f"illegal at {cells[0]}{more}", question="What was done?", status=status)


def looking_again(*, status: str | None = None) -> Screen:
    """OK pressed in play (the players say a move was missed): the board is read again."""
    return _notice(
        "Looking again",
        ["reading every cell", "of the board again:", "hands off the board"],
        status,
    )


def no_move_seen(*, status: str | None = None) -> Screen:
    """Looked at again, the board still shows no legal move."""
    return _notice(
        "No move seen", ["check the piece lies", "inside its cells,", "then OK: look again"], status
    )


def _notice(title: str, lines: Sequence[str], status: str | None) -> Screen:
    """A heading and a few lines of small print under it."""
    canvas = _Canvas(status)
    canvas.header(title)
    top = HEADER_HEIGHT + 4
    canvas.lines(lines, top, SMALL, min(13, (canvas.bottom - top) // len(lines)))
    return canvas.screen()


def shutdown(*, confirmed: bool = False, status: str | None = None) -> Screen:
    """The menu's "shut down": first the question (OK shuts down, UNDO does not), then, once
    confirmed, what to wait for before unplugging."""
    if confirmed:
        lines = ["the game is saved;", "unplug when the Pi's", "green light is off"]
        return _notice("SHUTTING DOWN", lines, status)
    return _notice("Shut down?", ["OK: shut the Pi down", "UNDO: keep playing"], status)


def game_over(
    winner: str | None, scores: Mapping[str, int], *, status: str | None = None
) -> Screen:
    """The end: the winner (or a draw) in big letters and the final scores."""
    canvas = _Canvas(status)
    canvas.header("GAME OVER")
    scores_y = canvas.bottom - 7
    name = "DRAW" if winner in (None, DRAW) else winner
    label = 0 if name == "DRAW" else 10
    if label:
        canvas.text((WIDTH // 2, HEADER_HEIGHT + 6), "winner", TINY, anchor="mm")
    area = (MARGIN, HEADER_HEIGHT + label + 2, WIDTH - MARGIN, scores_y - 7)
    sizes = range(28, BODY - 1, -1)
    size = largest_size([name], area[2] - area[0], area[3] - area[1], sizes)
    canvas.centred(area, name, size, bold=True)
    canvas.text((WIDTH // 2, scores_y), _scores(scores), SMALL, anchor="mm")
    return canvas.screen()


def phone_page(url: str | None) -> Screen:
    """The live page's address as a QR code a phone scans (dark modules on lit pixels, as
    printed codes are), with the address beside it; without a page, how to start one."""
    canvas = _Canvas()
    if url is None:
        canvas.header("Phone page")
        canvas.lines(wrap("off: start with referee run --web", SMALL, WIDTH - 8, 3), 18, SMALL, 12)
        return canvas.screen()
    import segno

    code = segno.make(url, error="l", micro=False)
    border = 1
    modules = code.symbol_size(scale=1, border=border)[0]
    scale = max(1, HEIGHT // modules)
    side = modules * scale
    top = (HEIGHT - side) // 2
    canvas.draw.rectangle((0, top, side - 1, top + side - 1), fill=ON)
    for row, line in enumerate(code.matrix_iter(scale=1, border=border)):
        for col, dark in enumerate(line):
            if dark:
                x, y = col * scale, top + row * scale
                canvas.draw.rectangle((x, y, x + scale - 1, y + scale - 1), fill=OFF)
    left = side + 3
    address = url.removeprefix("http://").rstrip("/")
    host, _, port = address.rpartition(":")
    width = WIDTH - left - 1
    canvas.text((left, 8), "scan for", SMALL, width=width)
    canvas.text((left, 19), "the live page", SMALL, width=width)
    canvas.text((left, 38), host or address, TINY, width=width)
    if port:
        canvas.text((left, 49), f"port {port}", TINY, width=width)
    return canvas.screen()


def inverted(image: Image.Image) -> Image.Image:
    """The negative of a 1-bit screen image (how a flashing screen alternates)."""
    return image.point(lambda value: OFF if value else ON)
