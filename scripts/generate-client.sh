#!/usr/bin/env bash
# Writes the Swift client's generated half, Sources/CaptureClient/Generated, from the server's
# openapi.json with Apple's swift-openapi-generator (`make client`). The generator is a package of
# its own (scripts/openapi-generator), built into .build-generator: about 3 minutes the first time
# on 2 cores, which is why `make test` does not run it. The files are committed instead, each
# headed with the SHA-256 of the document they were made from; CaptureClientTests fails when
# openapi.json changed since, and says to run `make client`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"

document=Sources/CaptureServer/openapi.json
output=Sources/CaptureClient/Generated
swift build --package-path scripts/openapi-generator --build-path .build-generator -c release \
    --product swift-openapi-generator
generator=.build-generator/release/swift-openapi-generator
digest=$(sha256sum "$document" | cut -d' ' -f1)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# A warning is a feature of the document the generator skips: none is left unexplained, so any fails.
"$generator" generate "$document" --config scripts/openapi-generator/openapi-generator-config.yaml \
    --output-directory "$scratch" \
    --additional-file-comment "swift-format-ignore-file" \
    --additional-file-comment "openapi.json SHA-256: $digest" 2> "$scratch/log"
if grep -i "warning" "$scratch/log"; then
    echo "generate-client: the generator skipped part of $document (above); express it in a form it reads" >&2
    exit 1
fi
rm -rf "$output"
mkdir -p "$output"
cp "$scratch"/*.swift "$output"/

# Each file imports Foundation and OpenAPIRuntime as `public import`, used or not; the generator
# silences the compiler's warning with @diagnose, which comes with Swift 6.4. Until then the
# imports the compiler names as unused in a file's public declarations are made internal there:
# what the compiler says, nothing guessed. `swift build` then shows no warning of the client.
swift build --target CaptureClient > "$scratch/build" 2>&1 || true
python3 - "$scratch/build" <<'PY'
import re, sys
unused = re.compile(r"^(/.*/Sources/CaptureClient/Generated/[^:]+):(\d+):\d+: warning: public import of '[^']+' was not used")
lines = {}
for line in open(sys.argv[1], encoding="utf-8"):
    match = unused.match(line)
    if match:
        lines.setdefault(match.group(1), set()).add(int(match.group(2)))
for path, numbers in lines.items():
    text = open(path, encoding="utf-8").read().split("\n")
    for number in numbers:
        text[number - 1] = text[number - 1].replace("public import ", "internal import ", 1)
    open(path, "w", encoding="utf-8").write("\n".join(text))
PY
touch "$output"/*.swift
if ! swift build --target CaptureClient > "$scratch/build" 2>&1; then
    grep -E "error:" "$scratch/build" | sort -u >&2
    echo "generate-client: the client does not build (above)" >&2
    exit 1
fi
if grep "Sources/CaptureClient/.*warning:" "$scratch/build"; then
    echo "generate-client: the client builds with the warnings above" >&2
    exit 1
fi
echo "generate-client: $output from $document ($digest)"
