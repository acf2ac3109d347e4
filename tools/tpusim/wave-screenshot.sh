#!/bin/sh
# wave-screenshot.sh - PNG of GTKWave showing a save file, with no display: GTKWave has no
# headless mode, so it runs on an Xvfb server of its own and ImageMagick's import captures it.
#
#   wave-screenshot.sh SAVE.gtkw OUT.png [WIDTHxHEIGHT]
#
# The window is sized WIDTHxHEIGHT (default 1400x1500: every group of an N = 4 layout) through a
# copy of the save file; the screen is the window. Needs the xvfb, gtkwave, imagemagick and
# x11-utils (xwininfo) packages.
set -eu

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 SAVE.gtkw OUT.png [WIDTHxHEIGHT]" >&2
    exit 2
fi
save=$1
out=$2
geom=${3:-1400x1500}
width=${geom%x*}
height=${geom#*x}
case "$width$height" in
    *[!0-9]* | "") echo "$0: bad size '$geom' (want WIDTHxHEIGHT)" >&2; exit 2 ;;
esac
[ -r "$save" ] || { echo "$0: cannot read $save" >&2; exit 2; }
for tool in Xvfb gtkwave import xwininfo; do
    command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done

tmp=$(mktemp -d)
xvfb=
viewer=
cleanup() {
    [ -z "$viewer" ] || kill "$viewer" 2>/dev/null || true
    [ -z "$xvfb" ] || kill "$xvfb" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
sed "s/^\[size\] .*/[size] $width $height/" "$save" >"$tmp/view.gtkw"

# Up to 30 s for each step: the server to start (it writes its display number, which it picks
# itself, to fd 3), GTKWave to read the trace and map its window.
wait_for() {
    tries=0
    until eval "$1"; do
        tries=$((tries + 1))
        if [ "$tries" -gt 300 ]; then
            [ ! -s "$tmp/gtkwave.log" ] || cat "$tmp/gtkwave.log" >&2
            echo "$0: timed out waiting for $2" >&2
            exit 1
        fi
        sleep 0.1
    done
}
Xvfb -displayfd 3 -screen 0 "${width}x${height}x24" 3>"$tmp/display" 2>/dev/null &
xvfb=$!
wait_for '[ -s "$tmp/display" ]' "Xvfb"
DISPLAY=:$(cat "$tmp/display")
export DISPLAY
gtkwave "$tmp/view.gtkw" >"$tmp/gtkwave.log" 2>&1 &
viewer=$!
wait_for 'xwininfo -root -tree 2>/dev/null | grep -q "\"GTKWave - "' "the GTKWave window"
sleep 2 # let it draw the waves
import -window root -depth 8 "$out"
