"""``referee train [NAME ...]``: fit the readers' models from their recipes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..models import MODELS_DIR

RECIPES = Path(__file__).with_name("recipes.json")


def recipes() -> dict[str, dict]:
    """Every model's recipe (``vision/train/recipes.json``)."""
    return {
        k: v for k, v in json.loads(RECIPES.read_text("utf-8")).items() if not k.startswith("_")
    }


def cmd_train(args: argparse.Namespace) -> int:
    """Fit the named models (all by default) and write them to ``--out``."""
    known = recipes()
    names = args.names or list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        print(
            f"referee: no recipe for {', '.join(unknown)}; known: {', '.join(known)}",
            file=sys.stderr,
        )
        return 2
    from .cache import FitCache
    from .fit import (
        fit_libraries,
        refit_adaptation,
        refit_change,
        refit_decode,
        refit_threshold,
        train,
    )

    cache = FitCache(args.cache, fit_libraries()) if args.cache else None

    for name in names:
        kind = known[name].get("kind")
        if kind:  # not a cell model: fitted whole, never in parts
            if not (args.change_only or args.adapt_only or args.decode_only or args.threshold_only):
                _fit_other(kind, known[name], args)
            continue
        if args.threshold_only:
            refit_threshold(name, known[name], Path(args.out), args.seed, args.workers, args.scenes)
            continue
        if args.change_only:
            refit_change(name, known[name], Path(args.out), args.seed, args.workers)
            continue
        if args.adapt_only:
            refit_adaptation(name, known[name], Path(args.out), args.seed, args.workers)
            continue
        if args.decode_only:
            refit_decode(name, known[name], Path(args.out), args.seed, args.workers)
            continue
        train(
            name,
            known[name],
            seed=args.seed,
            scenes=args.scenes,
            epochs=args.epochs,
            out=Path(args.out),
            workers=args.workers,
            cache=cache,
        )
    return 0


def _fit_other(kind: str, recipe: dict, args: argparse.Namespace) -> None:
    """Fit a recipe of another kind than a cell model's: the board placement's edge model, or
    the still run's test of an unread marker."""
    out = Path(args.out)
    if kind == "edges":
        from .edges import fit_edges

        fit_edges(recipe, args.seed, out, args.workers, args.scenes, args.epochs)
    elif kind == "still_look":
        from .still_look import fit_still_look

        fit_still_look(recipe, args.seed, out, args.workers, args.scenes)
    else:
        raise ValueError(f"a recipe of an unknown kind, {kind!r}")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``train`` sub-command."""
    p = sub.add_parser("train", help="fit the readers' models (needs the [train] extra)")
    p.add_argument("names", nargs="*", help=f"models to fit (default all of {RECIPES.name})")
    p.add_argument("--seed", type=int, default=1, help="seed of the scenes and the fit")
    p.add_argument("--scenes", type=int, help="rendered scenes (default: the recipe's)")
    p.add_argument("--epochs", type=int, help="training epochs (default: the recipe's)")
    p.add_argument(
        "--workers",
        type=int,
        help="processes rendering scenes and threads fitting the network (default: all cores)",
    )
    p.add_argument("--out", default=str(MODELS_DIR), help="folder of the model files")
    p.add_argument(
        "--cache",
        metavar="DIR",
        help="keep the renders, network and change test of a whole fit in DIR, so that the same "
        "command run again after a stop goes on where it stopped (vision.train.cache)",
    )
    p.add_argument(
        "--threshold-only",
        action="store_true",
        help=(
            "keep the fitted networks, fit again only which targets they read in every view "
            "and their foreign thresholds"
        ),
    )
    p.add_argument(
        "--change-only",
        action="store_true",
        help="keep the fitted networks, fit only their change thresholds again",
    )
    p.add_argument(
        "--adapt-only",
        action="store_true",
        help="keep the fitted networks, fit only how far a table may adapt them (vision.adapt)",
    )
    p.add_argument(
        "--decode-only",
        action="store_true",
        help="keep the fitted networks, fit only when a board is called illegal and when the "
        "players are asked to confirm a move",
    )
    p.set_defaults(func=cmd_train)
