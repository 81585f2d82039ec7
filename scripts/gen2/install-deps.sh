#!/usr/bin/env bash
# Installs what scripts/gen2/generate.py needs: the held-out typefaces for the number
# and the expiry, a few text fonts, background photos and paper textures (Debian
# packages), and Pillow and numpy for Python 3. Skips what is already there.
# Run as root (as CI does) or with sudo available.
set -euo pipefail

packages=(
    fontconfig
    fonts-hack
    fonts-b612
    fonts-karla
    fonts-cabin
    fonts-fantasque-sans
    fonts-quicksand
    fonts-go
    fonts-dejavu-core
    fonts-liberation2
    lomiri-wallpapers
    mypaint-data-extras
)
# Ubuntu Mono: Debian ships fonts-ubuntu outside main; used when an apt source has it.
optional=(fonts-ubuntu)

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for package in "${packages[@]}"; do
    installed "$package" || missing+=("$package")
done
optional_missing=()
for package in "${optional[@]}"; do
    installed "$package" || optional_missing+=("$package")
done

updated=0
if [ ${#missing[@]} -gt 0 ]; then
    $sudo apt-get update -qq
    updated=1
fi
for package in "${optional_missing[@]}"; do
    candidate=$(apt-cache policy "$package" 2>/dev/null | awk '/Candidate:/ {print $2}')
    if [ -n "$candidate" ] && [ "$candidate" != "(none)" ]; then
        missing+=("$package")
    else
        echo "gen2: $package is not available from the apt sources here; its typeface is skipped"
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "gen2: system packages all present"
else
    if [ "$updated" -eq 0 ]; then
        $sudo apt-get update -qq
    fi
    echo "gen2: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if python3 -c "import PIL, numpy" 2>/dev/null; then
    echo "gen2: Pillow and numpy present"
else
    echo "gen2: installing Pillow and numpy with pip"
    python3 -m pip install --quiet pillow numpy
fi
