#!/usr/bin/env bash
# Installs what the card-model pipeline needs and is missing: Tesseract with its training tools, the
# fonts named in fonts.txt and fonts-heldout.txt (third column), and Pillow + numpy. Skips what is there;
# uses sudo only when not root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

packages=(tesseract-ocr tesseract-ocr-eng fontconfig python3)
while IFS=$'\t' read -r _family _style package _path; do
    packages+=("$package")
done < <(grep -hv '^#' "$here/fonts.txt" "$here/fonts-heldout.txt" | grep -v '^[[:space:]]*$')

missing=()
for package in $(printf '%s\n' "${packages[@]}" | sort -u); do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "model deps: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fc-cache -f >/dev/null 2>&1 || true
else
    echo "model deps: Debian packages all present"
fi

if ! python3 -c 'import PIL, numpy' 2>/dev/null; then
    echo "model deps: installing Pillow and numpy"
    python3 -m pip install pillow numpy || python3 -m pip install --break-system-packages pillow numpy
fi
