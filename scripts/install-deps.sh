#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need, skipping what is already there.
# Run as root (as CI does) or with sudo available.
set -euo pipefail

packages=(
    pkg-config
    libpng-dev
    libtesseract-dev
    tesseract-ocr-eng
    tesseract-ocr
    libsqlite3-dev
    python3
)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "system packages: all present"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
echo "system packages: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
