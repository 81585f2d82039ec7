# Two commands do everything on a fresh Debian machine:
#   make run    install system packages, build release, scan the bundled cards, tokenize and charge in the sandbox
#   make test   install system packages, build, run every test

SWIFT ?= swift
export PATH := $(PATH):/opt/swift/usr/bin

.PHONY: deps test-deps build release run test lint format bench bench-api fixtures model model-learned clean

deps:
	bash scripts/install-deps.sh

# The tests' extra packages: Chromium, its driver and Selenium for the browser test.
test-deps:
	bash scripts/install-deps.sh test

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: deps
	bash scripts/demo.sh

# The Swift tests: the command-line tests and the others in two processes at once
# (scripts/swift-tests.sh says why), after one build of everything, capture-cli included.
test: test-deps lint
	SWIFT=$(SWIFT) bash scripts/swift-tests.sh
	# kill -9 while charging, restart, retry: nothing stuck, orphaned or charged twice.
	python3 scripts/crash-test.py --cli .build/debug/capture-cli
	# The hosted checkout page in headless Chromium: pay, decline, phone width, no JavaScript,
	# cancel; screenshots in test-artifacts/browser.
	python3 scripts/browser-test.py --cli .build/debug/capture-cli --artifacts test-artifacts/browser
	# The C bridges again under AddressSanitizer (leaks included): scripts/asan is a package of
	# OCRBridge and its tests alone, so the sanitized build leaves out the server's libraries.
	cd scripts/asan && $(SWIFT) test --disable-xctest --sanitize=address --scratch-path ../../.build-asan

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

# The API under load (wrk): token creations and transactions per second against GET /healthz.
bench-api: release
	bash scripts/bench-api.sh

# Regenerate the fixture images (needs Pillow: pip install pillow==13.0.0).
fixtures:
	python3 Fixtures/cards/generate.py
	python3 Tests/OCRBridgeTests/Fixtures/make_pngs.py

# Formatting follows .swift-format (Hummingbird's settings); `make format` applies it.
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

clean:
	rm -rf .build .build-asan
