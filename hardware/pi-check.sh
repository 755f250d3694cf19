#!/usr/bin/env bash
# `make pi-check`: the install on arm64 Debian Bookworm and Trixie roots run under emulation
# (qemu-user-static + binfmt_misc), as root. For each release:
#   1. build the root with debootstrap (once; kept in $PI_ROOTS, default /var/cache/referee-pi-roots);
#   2. copy this working tree to /opt/tabletop-referee in it (and ../shared to /opt/shared);
#   3. run hardware/install.sh, then again, and check that the second run changed nothing (a
#      listing with checksums of everything the script manages, before and after);
#   4. run the engine and vision tests there with the venv's Python.
# Each step prints how long it took. Raspberry Pi's package repository is not reachable from
# plain Debian, so picamera2 and libcamera are absent in these roots (install.sh says so).
# Not part of CI: it takes tens of minutes (docs/firmware.md has the figures).
#
#   sudo hardware/pi-check.sh [bookworm] [trixie]     (default: both)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOTS=${PI_ROOTS:-/var/cache/referee-pi-roots}
MIRROR=${PI_MIRROR:-http://deb.debian.org/debian}
PACKAGES=python3,python3-venv,python3-pip,make,ca-certificates,systemd,kmod
TESTS=${PI_TESTS:-tests/engine tests/vision}
# The emulated CPU: a Raspberry Pi 4's. qemu's default ("max") has SVE, which no Pi has, and
# numpy 2.5's arm64 matrix products came out wrong under it (qemu 7.2: `a @ m.T` off by up to 8
# for a 200x3 array); as a Cortex-A72 they are exact, as on a Pi.
export QEMU_CPU=${PI_CPU:-cortex-a72}
RELEASES=("$@")
[ ${#RELEASES[@]} -gt 0 ] || RELEASES=(bookworm trixie)

fail() { echo "pi-check: $*" >&2; exit 1; }
step() {  # step NAME COMMAND...: run, and print how long it took (failed or not)
    local name=$1 start=$SECONDS rc=0
    shift
    echo "pi-check: $name ..."
    "$@" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "pi-check: $name: FAILED after $((SECONDS - start)) s" >&2
        return "$rc"
    fi
    echo "pi-check: $name: $((SECONDS - start)) s"
}

[ "$(id -u)" -eq 0 ] || fail "run as root (debootstrap, chroot)"
command -v debootstrap >/dev/null || fail "apt-get install -y qemu-user-static debootstrap binfmt-support"
if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
    mount binfmt_misc -t binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    update-binfmts --enable qemu-aarch64 ||
        fail "no arm64 emulation: apt-get install -y qemu-user-static binfmt-support"
fi

mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" || true; done
}
trap cleanup EXIT

in_root() {  # in_root ROOT COMMAND...: run in the root with a clean environment
    local root=$1
    shift
    chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 QEMU_CPU="$QEMU_CPU" "$@"
}

build_root() {
    local release=$1 root=$2
    if [ -e "$root/.pi-check-root" ]; then
        echo "pi-check: $root exists (delete it to build it again)"
        return
    fi
    rm -rf "$root.tmp"
    debootstrap --arch=arm64 --variant=minbase --include="$PACKAGES" "$release" "$root.tmp" "$MIRROR" \
        >"$ROOTS/$release-debootstrap.log" || fail "debootstrap failed: $ROOTS/$release-debootstrap.log"
    mv "$root.tmp" "$root"
    touch "$root/.pi-check-root"
}

mount_root() {
    local root=$1 dir
    for dir in proc sys dev dev/pts; do
        mount --bind "/$dir" "$root/$dir"
        mounted+=("$root/$dir")
    done
    # the host's CPUs (x86) read as arm64 ones crash onnxruntime's CPU probe (cpuinfo) under
    # emulation; with none listed it only warns, as on a system without /sys
    mount -t tmpfs none "$root/sys/devices/system/cpu"
    mounted+=("$root/sys/devices/system/cpu")
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # the host's own certificate authorities (an intercepting proxy's) for pip's HTTPS
    if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
        in_root "$root" update-ca-certificates >/dev/null
    fi
}

copy_tree() {
    local root=$1
    mkdir -p "$root/opt/tabletop-referee" "$root/opt/shared"
    tar -C "$HERE" --exclude=./.venv --exclude=./.git --exclude=./out --exclude='*/__pycache__' \
        --exclude=./.pytest_cache --exclude=./.ruff_cache --exclude=./.hypothesis -cf - . |
        tar -C "$root/opt/tabletop-referee" -xf -
    tar -C "$HERE/../shared" -cf - . | tar -C "$root/opt/shared" -xf -
}

managed_state() {  # a listing, with checksums, of everything install.sh manages in ROOT
    local root=$1
    (
        cd "$root"
        find opt/tabletop-referee/.venv etc/systemd/system/referee.service \
            etc/systemd/system/multi-user.target.wants/referee.service etc/referee.toml \
            usr/local/bin/referee var/lib/referee -printf '%p %M %s %T@ %l\n' 2>/dev/null | sort
        sha256sum etc/passwd etc/group etc/referee.toml etc/systemd/system/referee.service
        in_root "$root" dpkg-query -W -f='${Package} ${Version}\n'
    ) | sha256sum | cut -c1-16
}

install_twice() {
    local root=$1 before after
    in_root "$root" /opt/tabletop-referee/hardware/install.sh
    before=$(managed_state "$root")
    echo "pi-check: second run of install.sh"
    in_root "$root" /opt/tabletop-referee/hardware/install.sh | tee "$root/tmp/second-run.log"
    after=$(managed_state "$root")
    [ "$before" = "$after" ] || fail "the second run of install.sh changed the system ($before -> $after)"
    grep -q '^changed:' "$root/tmp/second-run.log" && fail "the second run reported changes"
    echo "pi-check: idempotent: state $before before and after the second run"
}

run_tests() {  # after install_twice: the test tools go into the installed venv
    local root=$1
    in_root "$root" /opt/tabletop-referee/.venv/bin/pip install --quiet --disable-pip-version-check \
        pytest hypothesis
    # pyproject's addopts has -q already: one more would drop the summary line
    in_root "$root" sh -c "cd /opt/tabletop-referee && .venv/bin/python -m pytest -p no:cacheprovider $TESTS"
}

mkdir -p "$ROOTS"
for release in "${RELEASES[@]}"; do
    root="$ROOTS/$release"
    echo "pi-check: === $release (arm64) in $root"
    step "$release: debootstrap" build_root "$release" "$root"
    mount_root "$root"
    echo "pi-check: $release: $(in_root "$root" uname -m), $(in_root "$root" python3 --version)"
    step "$release: copy the tree" copy_tree "$root"
    step "$release: install.sh twice" install_twice "$root"
    step "$release: tests ($TESTS)" run_tests "$root"
    cleanup
    mounted=()
done
echo "pi-check: all passed (${RELEASES[*]})"
