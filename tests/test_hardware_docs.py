"""The build documents in ``hardware/``: the systemd unit, the links between the documents, the
camera heights of ``setup.md`` and the mount's presets against the geometry files, the mat sizes
of ``bom.md``, the Gobsmacked sticker places, and the OLED screen pictures."""

from __future__ import annotations

import argparse
import configparser
import importlib.util
import math
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from firmware.cli import build_parser
from vision.geometry import available_games, load_geometry

ROOT = Path(__file__).resolve().parents[1]
HARDWARE = ROOT / "hardware"
SETUP = HARDWARE / "setup.md"
UNIT = HARDWARE / "referee.service"
SCAD = HARDWARE / "mount.scad"

# Camera Module 3 datasheet: vertical field of view (the 4:3 frame keeps the sensor's full height).
V_FOV = {"standard": 41.0, "wide": 67.0}
ASPECT = 4 / 3
MARGIN = 0.05
TILTS = (20.0, 35.0)
PAPER = {"A3": (297, 420), "A2": (420, 594)}


def view_distance(width: float, depth: float, lens: str, tilt_deg: float) -> float:
    """The closest lens-to-mat-centre distance at which the mat plus 5 % fits (setup.md)."""
    tan_v = math.tan(math.radians(V_FOV[lens] / 2))
    tan_h = ASPECT * tan_v
    a, b = (0.5 + MARGIN) * width, (0.5 + MARGIN) * depth
    t = math.radians(tilt_deg)
    return max(a / tan_h, b * math.cos(t) / tan_v) + b * math.sin(t)


def table(text: str, first_header: str) -> list[list[str]]:
    """The body rows of the markdown table whose header row starts with ``first_header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def flat_games() -> list[str]:
    return [g for g in available_games() if load_geometry(g).extra["orientation"] == "flat"]


# ------------------------------------------------------------------ the systemd unit
def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)  # strict: a repeated key fails
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read_string(UNIT.read_text(), source=str(UNIT))
    return parser


def test_the_unit_parses_and_has_what_a_service_needs():
    u = unit()
    assert u.sections() == ["Unit", "Service", "Install"]
    service = u["Service"]
    assert service["User"] == "referee"
    assert service["Type"] == "notify"  # READY=1 and watchdog pings: firmware/watchdog.py
    assert 10 <= int(service["WatchdogSec"]) <= 120  # above the camera's frame timeout
    assert service["Restart"] == "on-failure"
    assert service["RestartSec"] == "2"
    assert service["KillSignal"] == "SIGINT"  # `referee run` cleans up on KeyboardInterrupt
    assert set(service["SupplementaryGroups"].split()) == {"video", "i2c", "gpio"}
    assert "systemd-modules-load.service" in u["Unit"]["After"].split()
    assert u["Install"]["WantedBy"] == "multi-user.target"


def test_the_unit_runs_referee_run_from_the_venv_that_setup_md_installs():
    argv = shlex.split(unit()["Service"]["ExecStart"])
    program = Path(argv[0])
    assert program.is_absolute() and program.name == "referee"
    assert program.parent.name == "bin" and program.parent.parent.name == ".venv"
    assert argv[1:] == ["run", "--config", "/etc/referee.toml"]
    setup = SETUP.read_text()
    install = program.parent.parent.parent
    assert f"git clone YOUR-COPY-OF-THE-REPOSITORY {install}" in setup
    assert f"sudo {install}/hardware/install.sh" in setup
    script = (HARDWARE / "install.sh").read_text()
    assert 'python3 -m venv --system-site-packages "$VENV"' in script
    assert 'VENV="$HERE/.venv"' in script and "useradd --system" in script


def test_the_cli_accepts_the_units_command_once_referee_run_exists():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if "run" not in commands.choices:
        pytest.skip("`referee run` is not in firmware/cli.py yet")
    args = parser.parse_args(shlex.split(unit()["Service"]["ExecStart"])[1:])
    assert args.command == "run" and args.config == "/etc/referee.toml"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_knows_every_key_of_the_unit(tmp_path):
    copy = tmp_path / "referee.service"
    copy.write_text(UNIT.read_text())
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(copy)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # Missing executables are expected off the Pi; a mistyped key or section is not.
    complaints = [
        line
        for line in done.stderr.splitlines()
        if re.search(r"Unknown (key|section)|Failed to parse|Invalid|Missing '='", line)
    ]
    assert not complaints


# ------------------------------------------------------------------ links
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """``text`` without its code blocks and code spans."""
    return CODE.sub("", FENCE.sub("", text))


def anchors(markdown: Path) -> set[str]:
    """GitHub's anchors of the headings of ``markdown``."""
    slugs = set()
    for line in prose(markdown.read_text()).splitlines():
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            slugs.add(slug.replace(" ", "-"))
    return slugs


def links() -> list[tuple[Path, str]]:
    """Every relative link (and image) of the ``hardware/*.md`` files: (document, target)."""
    found = []
    for doc in sorted(HARDWARE.glob("*.md")):
        targets = LINK.findall(prose(doc.read_text()))
        found += [(doc, t) for t in targets if not re.match(r"[a-z]+:", t)]
    return found


def test_the_hardware_documents_link_to_each_other():
    docs = {doc.name for doc, _ in links()}
    assert {"bom.md", "setup.md", "wiring.md"} <= docs


@pytest.mark.parametrize(("doc", "target"), links(), ids=lambda v: getattr(v, "name", v))
def test_every_relative_link_points_to_an_existing_file_and_heading(doc, target):
    path, _, fragment = target.partition("#")
    file = (doc.parent / path).resolve() if path else doc
    assert file.is_file(), f"{doc.name}: {target}"
    if fragment and file.suffix == ".md":
        assert fragment in anchors(file), f"{doc.name}: {target}"


# ------------------------------------------------------------------ numbers from the geometry
def test_the_heights_table_is_the_formula_applied_to_the_geometry_files():
    rows = table(SETUP.read_text(), "game")
    by_key = {(row[0], row[2]): row for row in rows}
    assert set(by_key) == {(g, lens) for g in available_games() for lens in V_FOV}
    for (game, lens), row in by_key.items():
        geometry = load_geometry(game)
        width, depth = geometry.mat_size
        assert row[1] == f"{width:g} x {depth:g}"
        assert int(row[3]) == math.ceil(view_distance(width, depth, lens, 0.0)), row
        for tilt, cell in zip(TILTS, row[4:], strict=True):
            if geometry.extra["orientation"] == "upright":
                assert cell == "–"  # the front stand looks square at the face
                continue
            d = view_distance(width, depth, lens, tilt)
            t = math.radians(tilt)
            expected = [math.ceil(v) for v in (d, d * math.cos(t), d * math.sin(t))]
            assert [int(v) for v in cell.split(" / ")] == expected, row


def test_at_that_distance_the_mat_and_its_margin_just_fill_the_frame():
    """The formula itself, against a pinhole projection of points all over the mat."""
    for game in flat_games():
        width, depth = load_geometry(game).mat_size
        for tilt in (0.0, *TILTS):
            d = view_distance(width, depth, "standard", tilt)
            t = math.radians(tilt)
            tan_v = math.tan(math.radians(V_FOV["standard"] / 2))
            xs = np.linspace(-0.55 * width, 0.55 * width, 23)
            ys = np.linspace(-0.55 * depth, 0.55 * depth, 23)
            x, y = np.meshgrid(xs, ys)
            depth_along_axis = d + y * math.sin(t)
            u = np.abs(x / depth_along_axis) / (ASPECT * tan_v)
            v = np.abs(y * math.cos(t) / depth_along_axis) / tan_v
            assert np.maximum(u, v).max() == pytest.approx(1.0, abs=1e-9)  # just inside


def test_the_mounts_presets_are_the_geometry_files():
    scad = SCAD.read_text()
    presets = {
        name: (float(w), float(d), orientation)
        for name, w, d, orientation in re.findall(
            r'\["([\w-]+)", \[(\d+), (\d+)\], "(\w+)"\]', scad
        )
    }
    assert set(presets) == set(available_games())
    for game, (w, d, orientation) in presets.items():
        geometry = load_geometry(game)
        assert (w, d) == tuple(geometry.mat_size)
        assert orientation == geometry.extra["orientation"]
    fov = re.search(r'lens == "wide" \? (\d+) : (\d+);', scad)
    assert fov and (float(fov[1]), float(fov[2])) == (V_FOV["wide"], V_FOV["standard"])
    assert re.search(rf"MARGIN = {MARGIN};", scad) and "ASPECT = 4 / 3;" in scad


@pytest.mark.skipif(shutil.which("openscad") is None, reason="OpenSCAD is not installed")
@pytest.mark.parametrize("game", available_games())
def test_openscad_places_the_lens_where_the_table_says(game, tmp_path):
    echo = tmp_path / "mount.echo"
    subprocess.run(
        ["openscad", "-o", str(echo), "-D", f'game="{game}"', "-D", "tilt_deg=35", str(SCAD)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    said = re.search(r"lens (\d+) mm above the table, (\d+) mm from", echo.read_text())
    assert said, echo.read_text()
    geometry = load_geometry(game)
    upright = geometry.extra["orientation"] == "upright"
    d = view_distance(*geometry.mat_size, "standard", 0.0 if upright else 35.0)
    assert abs(int(said[2]) - d) <= 0.5
    if not upright:
        assert abs(int(said[1]) - d * math.cos(math.radians(35))) <= 0.5


def test_the_bill_of_materials_prints_every_mat_on_paper_it_fits():
    rows = {row[0]: row for row in table((HARDWARE / "bom.md").read_text(), "game")}
    assert set(rows) == set(available_games())
    for game, row in rows.items():
        width, height = load_geometry(game).mat_size
        assert row[1] == f"{width:g} x {height:g}"
        paper = PAPER[row[2].split()[0]]
        assert min(width, height) <= min(paper) and max(width, height) <= max(paper), row


def test_the_gobsmacked_stickers_go_where_the_geometry_has_them():
    rows = table(SETUP.read_text(), "sticker id")
    geometry = load_geometry("gobsmacked")
    assert {int(r[0]): (float(r[1]), float(r[2])) for r in rows} == {
        m.id: tuple(m.center) for m in geometry.markers
    }


# ------------------------------------------------------------------ screen pictures
def load_picture_script():
    spec = importlib.util.spec_from_file_location(
        "make_screen_pictures", HARDWARE / "make_screen_pictures.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_the_committed_screen_pictures_are_what_the_script_draws(tmp_path):
    paths = load_picture_script().save(tmp_path)
    committed = sorted(p.name for p in (HARDWARE / "images").glob("*.png"))
    assert sorted(p.name for p in paths) == committed
    setup = SETUP.read_text()
    for path in paths:
        assert f"(images/{path.name})" in setup, path.name
        pixels = np.asarray(Image.open(path).convert("L"))
        assert pixels.shape == (256, 512)
        assert set(np.unique(pixels)) == {0, 255}
        blocks = pixels.reshape(64, 4, 128, 4)  # 4x nearest neighbour: uniform 4x4 blocks
        assert (blocks == blocks[:, :1, :, :1]).all()
        old = np.asarray(Image.open(HARDWARE / "images" / path.name).convert("L"))
        assert (old == pixels).all(), "run python hardware/make_screen_pictures.py"


# ------------------------------------------------------------------ the Pi: install, unit, config
CONFIG_PATH = "/etc/referee.toml"


def test_the_menus_shutdown_status_powers_off_and_is_no_failure():
    from firmware.appliance import SHUTDOWN_STATUS

    service = unit()["Service"]
    assert service["SuccessExitStatus"].split() == [str(SHUTDOWN_STATUS)]
    post = service["ExecStopPost"]
    assert post.startswith("+/bin/sh -c ")  # as root: the service user may not power off
    assert f'"$$EXIT_STATUS" = {SHUTDOWN_STATUS}' in post and "systemctl poweroff" in post


def test_one_config_path_everywhere():
    texts = {
        "default_config.toml": (ROOT / "firmware" / "default_config.toml").read_text(),
        "config.py": (ROOT / "firmware" / "config.py").read_text(),
        "setup.md": SETUP.read_text(),
        "referee.service": UNIT.read_text(),
        "install.sh": (HARDWARE / "install.sh").read_text(),
    }
    for name, text in texts.items():
        assert CONFIG_PATH in text, name
        others = set(re.findall(r"(?:/etc|~/\.config)/[\w./-]*\.toml", text)) - {CONFIG_PATH}
        assert not others, (name, others)


def test_the_settle_time_the_guide_quotes_is_the_default():
    from firmware.config import load_config

    quoted = re.findall(r"settle_seconds`, ([\d.]+) s by default", SETUP.read_text())
    assert quoted and {float(q) for q in quoted} == {load_config().vision.settle_seconds}


def test_install_sh_is_valid_bash_and_has_pins_for_each_release_it_names():
    for script in ("install.sh", "pi-check.sh"):
        subprocess.run(["bash", "-n", str(HARDWARE / script)], check=True)
    pins = {p.stem.removeprefix("pins-") for p in HARDWARE.glob("pins-*.txt")}
    assert pins == {"bookworm", "trixie"}
    from packaging.requirements import Requirement

    for release in pins:
        lines = (HARDWARE / f"pins-{release}.txt").read_text().splitlines()
        for line in (x for x in lines if x.strip() and not x.startswith("#")):
            Requirement(line)  # pip takes it as a constraint
