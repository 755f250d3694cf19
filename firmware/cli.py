"""The ``referee`` command line. Each sub-command lives in a small function; heavy imports
(OpenCV, luma, gpiozero) happen inside the commands that need them."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from engine import GAMES, Event, FormatError, Referee, game_class
from engine.referee import describe
from vision.models import ModelFileError, use_models


def cmd_games(args: argparse.Namespace) -> int:
    """List the games the referee knows."""
    for name in GAMES:
        print(f"{name:12s} {game_class(name).description}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """Feed a JSON Lines file of observations and events through the engine; exit 1 when a
    line could not be read (every other line is still judged)."""
    try:
        referee = Referee(args.game, players=args.players)
    except FormatError as exc:
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    try:
        lines = Path(args.file).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        print(f"referee: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print(
            f"referee: {args.file} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
            f"offset {exc.start}): expected JSON Lines of observations and events",
            file=sys.stderr,
        )
        return 2
    unreadable: list[int] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            parsed = referee.read(json.loads(line))
        except json.JSONDecodeError as exc:
            problem = f"not JSON ({exc.msg})"
        except FormatError as exc:
            problem = str(exc)
        else:
            problem = ""
        if problem:
            unreadable.append(number)
            outcome = referee.unreadable(problem)
        elif isinstance(parsed, Event):
            outcome = referee.event(parsed)
        else:
            outcome = referee.judge(parsed)
        if args.json:
            print(json.dumps(outcome.to_json()), flush=True)
        else:
            print(f"{number:4d}  {describe(outcome)}", flush=True)
    if not args.json:
        game = referee.game
        scores = ", ".join(f"{p} {s}" for p, s in game.scores.items())
        state = f"winner: {game.winner}" if game.is_over else f"not over, {game.to_move} to move"
        print(f"result: {scores}; {state}")
    if unreadable:
        print(f"referee: {_unreadable(args.file, unreadable)}", file=sys.stderr)
        return 1
    return 0


def _unreadable(file: str, numbers: list[int]) -> str:
    """The one line saying which lines of ``file`` could not be read, and the likely fix."""
    shown = ", ".join(map(str, numbers[:10])) + (", ..." if len(numbers) > 10 else "")
    text = f"{len(numbers)} line(s) of {file} could not be read (line {shown})"
    path = Path(file)
    if path.suffix == ".json":
        return f"{text}: {path.name} is a game record; replay {path.with_suffix('.jsonl')}"
    return text


def cmd_bench(args: argparse.Namespace) -> int:
    """Run a benchmark and print its figures (``--json``: one JSON object)."""
    if args.models is not None and args.target not in ("vision", "table", "loop", "night"):
        print(
            "referee: --models is for the vision, table, loop and night benchmarks",
            file=sys.stderr,
        )
        return 2
    if args.fresh_noise and args.target not in ("table", "night"):
        print("referee: --fresh-noise is for the table and night benchmarks", file=sys.stderr)
        return 2
    if args.target == "engine":
        from engine.bench import BENCH_GAMES, bench_game

        names = [args.game] if args.game else list(BENCH_GAMES)
        results = {}
        for name in names:
            result = bench_game(name, games=args.games, seconds=args.seconds)
            results[name] = result.to_json()
            if not args.json:
                print(
                    f"{name:12s} infer median {result.infer_ms_median:7.3f} ms "
                    f"(p95 {result.infer_ms_p95:.3f} ms, {result.observations} observations)  "
                    f"{result.playouts_per_s:8.1f} playouts/s",
                    flush=True,
                )
        if args.json:
            print(json.dumps({"games": results}))
        return 0
    if args.target == "loop":
        from .bench_loop import cmd_bench_loop

        return cmd_bench_loop(args)
    if args.target == "night":
        from .bench_night import cmd_bench_night

        return cmd_bench_night(args)
    if args.target == "web":
        from .web.bench import cmd_bench_web

        return cmd_bench_web(args)
    if args.photos is not None:
        if args.target != "vision":
            print("referee: --photos is for the vision benchmark", file=sys.stderr)
            return 2
        from vision.bench_photos import cmd_bench_photos

        return cmd_bench_photos(args)
    if args.target == "vision":
        from vision.bench import cmd_bench_vision

        return cmd_bench_vision(args)
    if args.target == "table":
        from vision.bench_table import cmd_bench_table

        return cmd_bench_table(args)
    print(f"referee: unknown benchmark {args.target!r}", file=sys.stderr)
    return 2


def _use_models(folder: str) -> bool:
    """Read with the models of ``folder`` (``--models``); False, said in one line, if it is no
    folder."""
    try:
        use_models(folder)
    except NotADirectoryError as exc:
        print(f"referee: {exc}", file=sys.stderr)
        return False
    return True


def _zoom(text: str) -> tuple[float, float]:
    """``LO,HI`` -> (LO, HI): a range of camera distances, multiples of the closest."""
    try:
        lo, hi = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO,HI (e.g. 1.5,1.8), not {text!r}") from None
    if not 0.5 <= lo <= hi <= 5.0:
        raise argparse.ArgumentTypeError(f"need 0.5 <= LO <= HI <= 5, not {text!r}")
    return lo, hi


def _positive(text: str) -> float:
    """A number above 0 (``--fps``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
    return value


def _positive_int(text: str) -> int:
    """A whole number above 0 (``--frames``, ``--dpi``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
    return value


def _lazy(module: str, name: str):
    """A command that imports its module only when it runs (keeps ``referee`` start-up light)."""

    def run(args: argparse.Namespace) -> int:
        from importlib import import_module

        return getattr(import_module(module), name)(args)

    return run


def build_parser() -> argparse.ArgumentParser:
    """The ``referee`` argument parser with every sub-command."""
    parser = argparse.ArgumentParser(prog="referee", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("games", help="list the games the referee knows")
    p.set_defaults(func=cmd_games)

    p = sub.add_parser("replay", help="judge a JSON Lines file of observations and events")
    p.add_argument("file")
    p.add_argument("--game", required=True, choices=list(GAMES))
    p.add_argument("--players", type=int, default=None, help="number of players (Spectrangle)")
    p.add_argument("--json", action="store_true", help="one JSON object per input line")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("read", help="read the board in one photo")
    p.add_argument("image")
    p.add_argument("--game", choices=list(GAMES), help="default: recognised from the markers")
    p.add_argument("--json", action="store_true", help="exactly the observation format")
    p.add_argument(
        "--models", metavar="DIR", help="read with the model files in DIR (default: committed)"
    )
    p.set_defaults(func=_lazy("vision.read", "cmd_read"))

    p = sub.add_parser("mat", help="write a game's printable mat (1:1 scale) or sticker template")
    p.add_argument("game", choices=list(GAMES))
    p.add_argument("--out", required=True, help="FILE.pdf or FILE.png")
    p.add_argument("--dpi", type=_positive_int, default=300, help="print resolution (default 300)")
    p.set_defaults(func=_lazy("vision.mat", "cmd_mat"))

    p = sub.add_parser("run", help="the appliance: camera, OLED and buttons (Ctrl-C to stop)")
    p.add_argument("--game", choices=list(GAMES), help="default: [game] default in the config")
    p.add_argument("--config", help="TOML file merged over firmware/default_config.toml")
    p.add_argument("--fps", type=_positive, default=10.0, help="frames judged per second")
    p.add_argument(
        "--models", metavar="DIR", help="read with the model files in DIR (default: committed)"
    )
    laptop = p.add_mutually_exclusive_group()
    laptop.add_argument(
        "--simulate",
        choices=list(GAMES),
        metavar="GAME",
        help="film a scripted game of GAME on the synthetic table; screens in a window",
    )
    laptop.add_argument(
        "--webcam", type=int, metavar="N", help="USB camera N (0: /dev/video0); screens in a window"
    )
    p.add_argument("--frames", type=_positive_int, help="stop after this many frames")
    p.add_argument(
        "--web",
        nargs="?",
        const="8080",
        metavar="[HOST:]PORT",
        help="serve the live page (default port 8080 on this machine's LAN address)",
    )
    p.set_defaults(func=_lazy("firmware.appliance", "cmd_run"))

    p = sub.add_parser("doctor", help="check camera, focus, I2C, display, buttons, power, disk")
    p.add_argument("--config", help="TOML file merged over firmware/default_config.toml")
    p.add_argument(
        "--press-seconds",
        type=float,
        help="seconds to press each button when asked (0: do not ask; default 10 on a terminal)",
    )
    p.set_defaults(func=_lazy("firmware.doctor", "cmd_doctor"))

    p = sub.add_parser("demo", help="a simulated game night of every game, no hardware needed")
    p.add_argument("--game", choices=list(GAMES), help="only this game")
    p.add_argument("--seed", type=int, default=7, help="seed of the scripted games")
    p.add_argument("--quiet", action="store_true", help="only the final scores")
    p.add_argument("--out", default="out/demo", help="folder of the screens' GIFs and records")
    p.add_argument(
        "--web",
        nargs="?",
        const="8080",
        metavar="[HOST:]PORT",
        help="serve the live page (default 127.0.0.1:8080) and play in real time",
    )
    p.set_defaults(func=_lazy("firmware.demo", "cmd_demo"))

    p = sub.add_parser("bench", help="measure speed (and accuracy) of a part of the referee")
    p.add_argument("target", choices=["engine", "vision", "table", "loop", "night", "web"])
    p.add_argument("--game", choices=list(GAMES), help="only this game")
    p.add_argument("--games", type=int, default=20, help="random games timed per game (engine)")
    p.add_argument("--seconds", type=float, default=2.0, help="playout time per game (engine)")
    p.add_argument("--scenes", type=int, default=200, help="rendered scenes per game (vision)")
    p.add_argument(
        "--seed", type=int, default=2026, help="seed of the scene corpus (vision, table, night)"
    )
    p.add_argument(
        "--tables", type=int, default=8, help="sample games filmed per game (table, night)"
    )
    p.add_argument(
        "--failures",
        action="store_true",
        help="list the scenes (or photos) not read right (vision), the moves accepted "
        "wrongly (table); on stderr",
    )
    p.add_argument(
        "--misplaced",
        action="store_true",
        help="boards lie a few mm and degrees off their outline on the mat (vision)",
    )
    p.add_argument(
        "--photos",
        metavar="DIR",
        help="score the labelled photos in DIR (and its subfolders) instead of rendered scenes",
    )
    p.add_argument(
        "--splits",
        default="corpus,heldout",
        help="scene sets, comma-separated: corpus (the fixed nominal corpus), train (the "
        "shared training domain; a model's recipe may widen it), heldout (other seeds and "
        "ranges, never fitted on), traced (held-out draws path-traced in held-out light, "
        "every game: needs Mitsuba, the [dev] or [train] extra); "
        "default corpus,heldout (vision, table, night)",
    )
    p.add_argument(
        "--zoom",
        type=_zoom,
        metavar="LO,HI",
        help="camera LO to HI times the closest distance that keeps the mat in view "
        "(vision; default: the corpus's 1.0,1.15)",
    )
    p.add_argument(
        "--models",
        metavar="DIR",
        help="read with the model files in DIR (a `referee train --out DIR`) instead of the "
        "committed ones (vision, table, loop, night)",
    )
    p.add_argument(
        "--fresh-noise",
        action="store_true",
        help="film every frame with sensor noise of its own, as a camera does, not one picture "
        "of each scene shown again (table, night)",
    )
    p.add_argument("--no-memory", action="store_true", help="skip the memory runs (loop, web)")
    p.add_argument("--clients", type=int, default=20, help="viewers on the live page (web)")
    p.add_argument("--stalled", type=int, default=5, help="of them, never reading (web)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench)

    from vision.train.cli import add_parser as add_train

    add_train(sub)

    from .export import add_parsers as add_export

    add_export(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``referee`` console script."""
    args = build_parser().parse_args(argv)
    if getattr(args, "models", None) is not None and not _use_models(args.models):
        return 2
    try:
        return args.func(args)
    except BrokenPipeError:  # `referee ... | head`: the reader left before the end
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # nothing more to flush into the closed pipe
        print("referee: output closed before the end (broken pipe)", file=sys.stderr)
        return 1
    except ModelFileError as exc:  # a missing or unreadable model file: one line, no traceback
        print(f"referee: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C in any command that has no stop of its own
        print("referee: stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
