# Two commands do everything on a fresh Debian machine:
#   make run    install system packages, build release, scan the bundled cards, tokenize and charge in the sandbox
#   make test   install system packages, build, run every test

SWIFT ?= swift
export PATH := $(PATH):/opt/swift/usr/bin

.PHONY: deps test-deps build release run test lint format bench bench-api fixtures model model-learned model-rows client clean

deps:
	bash scripts/install-deps.sh

# The tests' extra packages: Chromium and its driver, and in .venv-test/ Selenium and the schema fuzzer.
test-deps:
	bash scripts/install-deps.sh test

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: deps
	bash scripts/demo.sh

# Every test (scripts/test.sh): the Swift tests (the command-line tests and the others in two
# processes at once, after one build: scripts/swift-tests.sh), a crash test (kill -9 while
# charging), the schema fuzzer against openapi.json, the checkout page in headless Chromium, and
# the C bridges under AddressSanitizer.
# The packages only the tests need are installed beside the build.
test: deps lint
	SWIFT=$(SWIFT) bash scripts/test.sh

# The scanner's accuracy and speed: the fixtures (against the plain tesseract route), the second
# generator's cards and the real pictures in ../shared/cards-dev (scripts/bench/bench.sh).
bench: release
	bash scripts/bench/bench.sh

# Trains both of the project's own models from scratch; Models/README.md records how and how long:
# the Tesseract card-digit model, installed as Sources/CardCapture/Resources/card.traineddata
# (hours on 2 cores; resumable), and the learned card-line recognizer, Models/card-digits.onnx
# (PyTorch on the CPU, about 20 minutes on one thread; `make model-learned` builds it alone).
model: deps
	bash scripts/model/make_model.sh
	bash scripts/model/learned/make_learned.sh

model-learned: deps
	bash scripts/model/learned/make_learned.sh

# The number-row detector that chooses the first look's view (Models/README.md, number-rows.onnx):
# trained on ../shared/cards-train2 into .model-work/rows (about 32 minutes on one thread; resumable),
# then copied to Models/number-rows.onnx by hand once its figures are checked.
model-rows: deps
	bash scripts/model/rows/make_rows.sh

# The API under load (wrk): token creations and transactions per second against GET /healthz, on
# SQLite, PostgreSQL with one server and with two, and pgbench -N on the same cluster.
bench-api: release
	bash scripts/bench-api.sh

# The Swift client's generated half from openapi.json (committed; GeneratedCodeTests checks it
# against the document): builds swift-openapi-generator 1.14.3 into .build-generator the first time.
client:
	bash scripts/generate-client.sh

# Regenerate the fixture images (needs Pillow: pip install pillow==13.0.0).
fixtures:
	python3 Fixtures/cards/generate.py
	python3 Tests/OCRBridgeTests/Fixtures/make_pngs.py
	python3 Tests/OCRBridgeTests/Fixtures/make_jpegs.py

# Formatting follows .swift-format (Hummingbird's settings); `make format` applies it.
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

clean:
	rm -rf .build .build-asan
