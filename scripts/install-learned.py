#!/usr/bin/env python3
"""Installs what the learned engine needs into the git-ignored .vendor/ folder of the checkout.

- OpenVINO's runtime (C API headers and the five libraries the CPU needs) from the pinned PyPI
  wheel `openvino`, into .vendor/openvino/{include,lib};
- PP-OCRv4's text detector and recognizer (ONNX) from the pinned PyPI wheel
  `rapidocr-onnxruntime` (Apache-2.0), into .vendor/models.

Every file fetched is checked against the SHA-256 written here, the wheels and the models both;
a mismatch stops the set-up with a message and installs nothing. What is already installed and
matches is left alone, so a second run costs a few hashes. Only the standard library is used:
`pip download` fetches the wheels (from PyPI, or the mirror pip is set up for), zipfile unpacks.
"""
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENDOR = os.path.join(ROOT, ".vendor")

OPENVINO = {
    "requirement": "openvino==2026.4.1",
    "file": "openvino-2026.4.1-22982-cp311-cp311-manylinux_2_28_x86_64.whl",
    "sha256": "2d22b1da03f7caf74df30e9f6417d0ab2f637e4a38e08e1dcd294d2c37407aaf",
}
# The libraries the C API needs to read ONNX and run on the CPU: the C API, the core, TBB (the
# core's thread pool), the CPU plugin and the ONNX front end. The rest of the wheel (GPU and NPU
# plugins, other front ends, the Python module) is left out.
OPENVINO_LIBRARIES = [
    "libopenvino_c.so.2641",
    "libopenvino.so.2641",
    "libtbb.so.12",
    "libopenvino_intel_cpu_plugin.so",
    "libopenvino_onnx_frontend.so.2641",
]
RAPIDOCR = {
    "requirement": "rapidocr-onnxruntime==1.4.4",
    "file": "rapidocr_onnxruntime-1.4.4-py3-none-any.whl",
    "sha256": "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf",
}
MODELS = {
    "ch_PP-OCRv4_det_infer.onnx": "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9",
    "ch_PP-OCRv4_rec_infer.onnx": "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b",
}
# The recognizer's classes, in output order after the CTC blank (index 0), with the space last;
# written beside the model from the table its ONNX file carries (metadata "character").
KEYS = "ch_PP-OCRv4_rec_keys.txt"
STAMP = os.path.join(VENDOR, "installed.txt")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fail(message):
    print(f"install-learned: {message}", file=sys.stderr)
    sys.exit(1)


def stamp_text():
    return "\n".join([OPENVINO["file"] + " " + OPENVINO["sha256"], RAPIDOCR["file"] + " " + RAPIDOCR["sha256"]]
                     + [f"{name} {digest}" for name, digest in sorted(MODELS.items())]) + "\n"


def installed():
    if not os.path.isfile(STAMP) or open(STAMP).read() != stamp_text():
        return False
    lib = os.path.join(VENDOR, "openvino", "lib")
    if not all(os.path.isfile(os.path.join(lib, name)) for name in OPENVINO_LIBRARIES):
        return False
    if not os.path.isfile(os.path.join(VENDOR, "openvino", "include", "openvino", "c", "openvino.h")):
        return False
    if not os.path.isfile(os.path.join(VENDOR, "models", KEYS)):
        return False
    return all(os.path.isfile(os.path.join(VENDOR, "models", name)) and sha256(os.path.join(VENDOR, "models", name)) == digest
               for name, digest in MODELS.items())


def recognizer_keys(model_path):
    """The character table in the model's metadata: the ONNX field metadata_props holds a
    StringStringEntryProto whose key is "character" and whose value lists one class per line."""
    data = open(model_path, "rb").read()
    marker = b"\n\tcharacter\x12"
    at = data.rfind(marker)
    if at < 0:
        fail(f"{model_path} carries no character table")
    at += len(marker)
    length = shift = 0
    while True:
        byte = data[at]
        at += 1
        length |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
    keys = data[at:at + length].decode("utf-8").split("\n")
    return keys + [" "]


def download(wheel, folder):
    """Fetches one pinned wheel for Linux x86_64 and CPython 3.11 (the libraries inside do not
    depend on the Python that runs this), whatever Python runs the set-up."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
               "--only-binary=:all:", "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64",
               "--dest", folder, wheel["requirement"]]
    result = subprocess.run(command, capture_output=True, text=True)
    path = os.path.join(folder, wheel["file"])
    if result.returncode != 0 or not os.path.isfile(path):
        fail(f"could not download {wheel['requirement']} from PyPI:\n{result.stderr.strip()}")
    digest = sha256(path)
    if digest != wheel["sha256"]:
        fail(f"{wheel['file']} has SHA-256 {digest}, expected {wheel['sha256']}: refusing it")
    return path


def main():
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        fail(f"the learned engine's runtime is installed for Linux x86_64 only, not {platform.system()} "
             f"{platform.machine()}; the scanner still runs with --engine tesseract")
    if installed():
        print("learned engine: OpenVINO 2026.4.1 and PP-OCRv4 models present")
        return
    print("learned engine: fetching OpenVINO 2026.4.1 and PP-OCRv4 (rapidocr-onnxruntime 1.4.4) from PyPI")
    with tempfile.TemporaryDirectory() as work:
        openvino_wheel = download(OPENVINO, work)
        rapidocr_wheel = download(RAPIDOCR, work)
        staging = os.path.join(work, "vendor")
        include = os.path.join(staging, "openvino", "include")
        lib = os.path.join(staging, "openvino", "lib")
        models = os.path.join(staging, "models")
        for folder in (include, lib, models):
            os.makedirs(folder)
        with zipfile.ZipFile(openvino_wheel) as wheel:
            for name in wheel.namelist():
                if name.startswith("openvino/include/openvino/c/") and name.endswith(".h"):
                    target = os.path.join(include, name[len("openvino/include/"):])
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with wheel.open(name) as source, open(target, "wb") as out:
                        shutil.copyfileobj(source, out)
            for library in OPENVINO_LIBRARIES:
                with wheel.open("openvino/libs/" + library) as source, open(os.path.join(lib, library), "wb") as out:
                    shutil.copyfileobj(source, out)
        with zipfile.ZipFile(rapidocr_wheel) as wheel:
            for name, digest in MODELS.items():
                target = os.path.join(models, name)
                with wheel.open("rapidocr_onnxruntime/models/" + name) as source, open(target, "wb") as out:
                    shutil.copyfileobj(source, out)
                if sha256(target) != digest:
                    fail(f"{name} in {RAPIDOCR['file']} does not have SHA-256 {digest}: refusing it")
        keys = recognizer_keys(os.path.join(models, "ch_PP-OCRv4_rec_infer.onnx"))
        if len(keys) != 6624 or keys[24:26] != ["2", "0"]:
            fail("the recognizer's character table is not PP-OCRv4's (6,624 classes)")
        with open(os.path.join(models, KEYS), "w", encoding="utf-8") as out:
            out.write("\n".join(keys) + "\n")
        os.makedirs(VENDOR, exist_ok=True)
        for part in ("openvino", "models"):
            shutil.rmtree(os.path.join(VENDOR, part), ignore_errors=True)
            shutil.move(os.path.join(staging, part), os.path.join(VENDOR, part))
    with open(STAMP, "w") as f:
        f.write(stamp_text())
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(VENDOR) for f in fs)
    print(f"learned engine: installed in .vendor ({size / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
