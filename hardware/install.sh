#!/usr/bin/env bash
# Install the referee on Raspberry Pi OS (Bookworm or Trixie, 64-bit): run as root from the
# repository's copy in place (normally /opt/tabletop-referee):
#
#   sudo /opt/tabletop-referee/hardware/install.sh
#
# What it does, each step only when it is not done yet (a second run changes nothing):
#   1. the Debian packages: python3-venv, i2c-tools, and from Raspberry Pi's repository
#      python3-picamera2 and python3-lgpio (on a system without that repository: a message, and
#      the camera stays unavailable);
#   2. the venv .venv with --system-site-packages (so that it sees the system's picamera2), the
#      referee installed in it with the release's pins (hardware/pins-RELEASE.txt), and
#      /usr/local/bin/referee;
#   3. the system user `referee` in the groups video, i2c and gpio, and /etc/referee.toml (kept
#      if it exists);
#   4. the systemd unit (hardware/referee.service, with this copy's path), enabled at boot;
#   5. I2C and the camera enabled (raspi-config nonint; a message where there is no raspi-config).
# It prints one line per step: "changed: ..." or "ok: ...", and what it could not do.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$HERE/.venv"
UNIT_SOURCE="$HERE/hardware/referee.service"
UNIT_TARGET="${REFEREE_UNIT_DIR:-/etc/systemd/system}/referee.service"
CONFIG=/etc/referee.toml
USER_NAME=referee
GROUPS_NEEDED=(video i2c gpio)
STAMP="$VENV/.referee-install"
changes=0

say() { printf '%s\n' "$*"; }
changed() { changes=$((changes + 1)); say "changed: $*"; }
fail() { say "install.sh: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "run it as root: sudo $0"

# ------------------------------------------------------------------ the release
[ -r /etc/os-release ] || fail "no /etc/os-release: not a Debian-based system"
# shellcheck disable=SC1091
. /etc/os-release
RELEASE="${VERSION_CODENAME:-unknown}"
PINS="$HERE/hardware/pins-$RELEASE.txt"
[ -f "$PINS" ] || fail "release '$RELEASE' is not supported (bookworm and trixie are: hardware/pins-*.txt)"
say "ok: release $RELEASE (${PRETTY_NAME:-?}), python $(python3 -c 'import sys; print(sys.version.split()[0])' 2>/dev/null || echo 'not installed yet')"

# ------------------------------------------------------------------ 1. Debian packages
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
available() { [ -n "$(apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p' | grep -v '(none)')" ]; }

if ! compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; then
    apt-get update -qq  # a fresh image without package lists: nothing would look available
fi
wanted=(python3-venv python3-pip i2c-tools)
pi_packages=(python3-picamera2 python3-lgpio)
missing=()
for package in "${wanted[@]}"; do installed "$package" || missing+=("$package"); done
declare -A without=(
    [python3-picamera2]="the Pi camera stays unavailable (a USB camera still works)"
    [python3-lgpio]="gpiozero falls back to its other pin libraries"
)
for package in "${pi_packages[@]}"; do
    if installed "$package"; then continue; fi
    if available "$package"; then
        missing+=("$package")
    else
        say "note: $package is not in this system's package sources (not Raspberry Pi OS?):" \
            "installing without it; ${without[$package]}"
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    changed "installed ${missing[*]}"
else
    say "ok: Debian packages present (${wanted[*]}$(installed python3-picamera2 && echo ' python3-picamera2'))"
fi

# ------------------------------------------------------------------ 2. the venv and the referee
# The system's NumPy is the one picamera2 is built against: when python3-numpy is installed the
# venv must use that very version (pip then leaves it to the system site-packages).
SYSTEM_NUMPY=""
if installed python3-numpy; then
    SYSTEM_NUMPY=$(python3 -c 'import numpy; print(numpy.__version__)')
fi
if [ ! -x "$VENV/bin/python" ] || ! grep -qx 'include-system-site-packages = true' "$VENV/pyvenv.cfg"; then
    rm -rf "$VENV"
    python3 -m venv --system-site-packages "$VENV"
    changed "created $VENV (--system-site-packages)"
else
    say "ok: $VENV sees the system site-packages"
fi
want_stamp=$( { cat "$HERE/pyproject.toml" "$PINS"; echo "numpy $SYSTEM_NUMPY"; } | sha256sum | cut -c1-64)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$want_stamp" ] || ! "$VENV/bin/referee" games >/dev/null 2>&1; then
    constraints=$(mktemp)
    trap 'rm -f "$constraints"' EXIT
    grep -v '^ *#' "$PINS" > "$constraints"
    [ -n "$SYSTEM_NUMPY" ] && echo "numpy==$SYSTEM_NUMPY" >> "$constraints"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -c "$constraints" -e "$HERE"
    echo "$want_stamp" > "$STAMP"
    changed "installed the referee in $VENV with the $RELEASE pins ($(grep -v '^ *#' "$PINS" | tr '\n' ' ')${SYSTEM_NUMPY:+numpy==$SYSTEM_NUMPY from the system})"
else
    say "ok: the referee is installed in $VENV with the $RELEASE pins"
fi
if [ "$(readlink /usr/local/bin/referee 2>/dev/null)" != "$VENV/bin/referee" ]; then
    ln -sfn "$VENV/bin/referee" /usr/local/bin/referee
    changed "/usr/local/bin/referee -> $VENV/bin/referee"
else
    say "ok: /usr/local/bin/referee"
fi

# ------------------------------------------------------------------ 3. user, groups, config
for group in "${GROUPS_NEEDED[@]}"; do
    if ! getent group "$group" >/dev/null; then
        groupadd --system "$group"
        changed "created the group $group (Raspberry Pi OS has it; this system did not)"
    fi
done
if ! id "$USER_NAME" >/dev/null 2>&1; then
    useradd --system --create-home --home-dir /var/lib/referee --shell /usr/sbin/nologin \
        --groups "$(IFS=,; echo "${GROUPS_NEEDED[*]}")" "$USER_NAME"
    changed "created the user $USER_NAME (groups ${GROUPS_NEEDED[*]})"
else
    for group in "${GROUPS_NEEDED[@]}"; do
        if ! id -nG "$USER_NAME" | tr ' ' '\n' | grep -qx "$group"; then
            usermod -aG "$group" "$USER_NAME"
            changed "added $USER_NAME to the group $group"
        fi
    done
    say "ok: user $USER_NAME in ${GROUPS_NEEDED[*]}"
fi
if [ ! -e "$CONFIG" ]; then
    cat > "$CONFIG" <<'EOF'
# tabletop-referee: only the keys you change; every key and its default are in
# firmware/default_config.toml (hardware/setup.md, "Configure").
EOF
    changed "wrote an empty $CONFIG"
else
    say "ok: $CONFIG kept as it is"
fi

# ------------------------------------------------------------------ 4. the systemd unit
unit=$(sed "s#/opt/tabletop-referee#$HERE#g" "$UNIT_SOURCE")
if [ "$(cat "$UNIT_TARGET" 2>/dev/null)" != "$unit" ]; then
    mkdir -p "$(dirname "$UNIT_TARGET")"
    printf '%s\n' "$unit" > "$UNIT_TARGET"
    changed "installed $UNIT_TARGET"
    [ -d /run/systemd/system ] && systemctl daemon-reload
else
    say "ok: $UNIT_TARGET is up to date"
fi
wants="$(dirname "$UNIT_TARGET")/multi-user.target.wants/referee.service"
if [ ! -L "$wants" ]; then
    mkdir -p "$(dirname "$wants")"
    ln -sfn "$UNIT_TARGET" "$wants"  # what `systemctl enable` does, also where systemd is not running
    changed "enabled referee.service at boot (start it now: sudo systemctl start referee)"
else
    say "ok: referee.service is enabled at boot"
fi

# ------------------------------------------------------------------ 5. I2C and the camera
if command -v raspi-config >/dev/null; then
    if [ "$(raspi-config nonint get_i2c)" != 0 ]; then
        raspi-config nonint do_i2c 0
        changed "enabled I2C (reboot for it to take effect)"
    else
        say "ok: I2C is enabled"
    fi
    boot_config=/boot/firmware/config.txt
    [ -f "$boot_config" ] || boot_config=/boot/config.txt
    if ! grep -qx 'camera_auto_detect=1' "$boot_config"; then
        if grep -q '^camera_auto_detect=' "$boot_config"; then
            sed -i 's/^camera_auto_detect=.*/camera_auto_detect=1/' "$boot_config"
        else
            printf 'camera_auto_detect=1\n' >> "$boot_config"
        fi
        changed "enabled the camera (camera_auto_detect=1 in $boot_config; reboot)"
    else
        say "ok: the camera is enabled (camera_auto_detect=1 in $boot_config)"
    fi
else
    say "note: no raspi-config (not Raspberry Pi OS?): I2C and the camera are left as they are;" \
        "on a Pi run: sudo raspi-config nonint do_i2c 0"
fi

if [ "$changes" -eq 0 ]; then
    say "done: nothing to change"
else
    say "done: $changes change(s); check the hardware with: referee doctor --config $CONFIG"
fi
