import ArgumentParser
import CardCapture
import Foundation
import OCRBridge

/// `--engine`: which engines read the number (``CardScanner/Engine``).
enum EngineOption: String, ExpressibleByArgument, CaseIterable {
    case learned, tesseract, both

    var engine: CardScanner.Engine {
        switch self {
        case .learned: .learned
        case .tesseract: .tesseract
        case .both: .both
        }
    }

    /// A scanner reading with these engines, its inferences using the cores that `workers`
    /// scans at once leave; a missing engine is said on standard error and ends the command
    /// with status 2.
    /// - Parameter timeBudget: ``CardScanner/Configuration/timeBudget``.
    /// - Parameter firstPassOnly: ``CardScanner/Configuration/firstPassOnly``.
    /// - Parameter acceptsTestNumbers: ``CardScanner/Configuration/acceptsTestNumbers``.
    func makeScanner(workers: Int, timeBudget: Duration? = nil, firstPassOnly: Bool = false, acceptsTestNumbers: Bool = true) throws -> CardScanner {
        do {
            let configuration = CardScanner.Configuration(
                engine: engine,
                timeBudget: timeBudget,
                firstPassOnly: firstPassOnly,
                acceptsTestNumbers: acceptsTestNumbers
            )
            return try CardScanner(configuration: configuration, workers: workers)
        } catch {
            Terminal.writeError("capture-cli: \(error.message)")
            throw ExitCode(2)
        }
    }
}

/// `capture-cli scan`: reads card numbers and expiries off PNG and JPEG pictures.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Read the card number and expiry off PNG or JPEG pictures.",
        discussion: """
            Numbers are masked (first 6, last 4) unless --reveal is given. With --json, one JSON \
            object per image and line, in input order. A whole number read that fails the check digit \
            or the confidence threshold is never reported as the card's: its status is "unverified" \
            and it is offered, masked, for a person to correct. A sample card (printed SAMPLE or \
            SPECIMEN, or a number only sample cards print, such as 1234 5678 9012 3456) is never a \
            card: its status is "specimen". With --manual-fallback, an image whose \
            number could not be read, or not surely, opens the manual-entry prompt (on standard error) \
            with what the scan did read as defaults (unverified digits typed in, to correct); Ctrl-D \
            keeps the scan's result, Ctrl-C stops. With --frames, the pictures are frames of one card \
            (or one video file, cut into frames by ffmpeg) read as the hosted page's camera reads them \
            (in order, by the first pass alone, or by the whole scan within 1.5 s after a frame the first \
            pass read no number on; unless --first-pass or --time-budget is given) and together: a number \
            is taken when two frames agree, or one frame both engines read surely, and one line says how \
            many agreed.
            Exit status: 0 when every image gave a number, 1 when some did not, 2 on an error or bad usage.
            """
    )

    @Argument(help: "The PNG or JPEG pictures to scan (a phone's EXIF turn is applied).")
    var images: [String]

    @Flag(help: "The pictures are frames of one card (or one video file): read them together and vote.")
    var frames = false

    @Flag(help: "Print one JSON object per image instead of a table.")
    var json = false

    @Flag(help: "Print the full card number as well as the masked one.")
    var reveal = false

    @Flag(
        name: .customLong("refuse-test-numbers"),
        help: "Take published test numbers (4242 4242 4242 4242, …) for sample cards, as live payments must; the sandbox takes them."
    )
    var refuseTestNumbers = false

    @Flag(
        help: ArgumentHelp(
            "With --json, give each scan's time by stage, and say on standard error how long the engines took to load.",
            discussion:
                "\"timings\" holds each stage's milliseconds and calls (decode, locate, find_rows, detect, read_digits, read_text, tesseract) and \"otherMs\", the scanner's own work; \"phases\" the milliseconds of each part of the scan (number, expiry, holder, specimen, tesseract_route), which hold the stages. The load is in no scan's \"ms\"."
        )
    )
    var timings = false

    @Option(help: "How many images to scan at once (default: the number of cores).")
    var jobs: Int?

    @Option(
        name: .customLong("debug-dir"),
        help: "Write a picture and a text file per image to this folder: the card outline, the rows read and the digits read (in full)."
    )
    var debugDirectory: String?

    @Flag(
        name: .customLong("manual-fallback"),
        help: "Ask for the card by hand when the scan finds no number or an unsure one."
    )
    var manualFallback = false

    @Option(
        name: .customLong("sure-confidence"),
        help:
            "With --manual-fallback, a number read with less confidence than this (0 to 1, default 0.75) is offered for a person to check; 1 checks every number."
    )
    var sureConfidence = ManualEntry.sureConfidence

    @Option(help: "Which engines read the number: learned (OpenVINO), tesseract (needs no model files) or both.")
    var engine: EngineOption = .both

    @Option(
        name: .customLong("time-budget"),
        help: ArgumentHelp(
            "Milliseconds a scan may search for the number before it answers with what it has (default: no limit).",
            discussion:
                "Once spent, no further way of seeing the picture is tried and the date is looked for close under the number only; the card's outline and the first look's widest rows are read whatever the budget, so a scan runs over (by a second on a picture full of edges). Fewer cards are read: the README gives the trade.",
            valueName: "ms"
        )
    )
    var timeBudget: Int?

    @Flag(
        name: .customLong("first-pass"),
        help: ArgumentHelp(
            "Read with the first pass alone: the likeliest card, once (default: the whole scan).",
            discussion:
                "One look at the card, its number band's three widest rows, the date close under the number; no other outline, turn, scale or Tesseract route. A number it reports is the one the whole scan reports; cards it cannot read are not_found or unverified. Its time is bounded whatever the picture: the server reads most camera frames this way."
        )
    )
    var firstPass = false

    func validate() throws {
        if images.isEmpty { throw ValidationError("give at least one PNG or JPEG picture to scan") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if let timeBudget, timeBudget < 0 { throw ValidationError("--time-budget is milliseconds, 0 or more, for example 400") }
        if !(0...1).contains(sureConfidence) { throw ValidationError("--sure-confidence must be between 0 and 1, for example 0.9") }
        if frames && (manualFallback || debugDirectory != nil) {
            throw ValidationError("--frames reads the pictures together: --manual-fallback and --debug-dir are for single pictures")
        }
    }

    func run() async throws {
        if frames { return try await runFrames() }
        let workers = min(jobs ?? Terminal.coreCount, images.count)
        let loading = ContinuousClock.now
        let scanner = try engine.makeScanner(
            workers: workers,
            timeBudget: timeBudget.map { .milliseconds($0) },
            firstPassOnly: firstPass,
            acceptsTestNumbers: !refuseTestNumbers
        )
        if timings {
            Terminal.writeError(JSONLine.encode(["engines_loaded_ms": ScanJSON.tenths((ContinuousClock.now - loading).seconds * 1000)]))
        }
        if let debugDirectory {
            do {
                try FileManager.default.createDirectory(atPath: debugDirectory, withIntermediateDirectories: true)
            } catch {
                Terminal.writeError("capture-cli: cannot create the debug folder \(debugDirectory): \(error.localizedDescription)")
                throw ExitCode(2)
            }
        }
        let debugDirectory = self.debugDirectory
        let progress = Progress(total: images.count, enabled: images.count > 1 && Terminal.isTerminal(2))
        if !json { print(ScanRow.header) }
        var outcomes = [ScanOutcome?](repeating: nil, count: images.count)
        var nextToPrint = 0
        var failures = (notFound: 0, errors: 0)
        var prompt = manualFallback ? EntryPrompt(output: 2) : nil
        var interrupted = false

        await withTaskGroup(of: (Int, ScanOutcome).self) { group in
            var nextToStart = 0
            func startNext() {
                guard nextToStart < images.count else { return }
                let index = nextToStart
                let path = images[index]
                nextToStart += 1
                group.addTask {
                    let outcome = ScanOutcome(file: path) {
                        guard let debugDirectory else { return try scanner.scan(contentsOf: path) }
                        let (result, picture, readings) = try scanner.scanWithDebugImage(contentsOf: path)
                        let name = path.split(separator: "/").last.map(String.init) ?? "image"
                        let bytes = try PNGEncoder.encode(picture)
                        let text = Data(readings.joined(separator: "\n").utf8 + [10])
                        guard FileManager.default.createFile(atPath: debugDirectory + "/" + name + ".debug.png", contents: Data(bytes)),
                            FileManager.default.createFile(atPath: debugDirectory + "/" + name + ".debug.txt", contents: text)
                        else {
                            throw OCRError(.imageUnreadable, "cannot write the debug picture and readings to \(debugDirectory)")
                        }
                        return result
                    }
                    return (index, outcome)
                }
            }
            for _ in 0..<workers { startNext() }
            for await (index, outcome) in group {
                outcomes[index] = outcome
                progress.advance()
                // Print in input order as soon as the next image in line is done.
                while nextToPrint < outcomes.count, var ready = outcomes[nextToPrint] {
                    progress.clear()
                    if prompt != nil {
                        guard let entered = prompt?.fallback(for: ready, sureConfidence: sureConfidence) else {
                            interrupted = true
                            group.cancelAll()
                            return
                        }
                        ready = entered
                    }
                    if json {
                        print(JSONLine.encode(ScanJSON(ready, reveal: reveal, showSource: manualFallback, timings: timings)))
                    } else {
                        print(ScanRow(ready, reveal: reveal).text)
                    }
                    switch ready.result {
                    case .success(let result) where result.status != .found: failures.notFound += 1
                    case .failure: failures.errors += 1
                    default: break
                    }
                    nextToPrint += 1
                }
                progress.draw()
                startNext()
            }
        }
        progress.finish()
        if interrupted { throw ExitCode(130) }
        if failures.errors > 0 { throw ExitCode(2) }
        if failures.notFound > 0 { throw ExitCode(1) }
    }
}

/// One image's outcome: a result or an error that never holds card data.
struct ScanOutcome: Sendable {
    enum Source: String, Sendable {
        case scan
        /// Typed by a person after the scan fell short.
        case manual
    }

    let file: String
    let result: Result<ScanResult, OCRError>
    var source = Source.scan

    init(file: String, entered result: ScanResult) {
        self.file = file
        self.result = .success(result)
        self.source = .manual
    }

    init(file: String, _ body: () throws -> ScanResult) {
        self.file = file
        do {
            result = .success(try body())
        } catch let error as OCRError {
            result = .failure(error)
        } catch {
            result = .failure(OCRError(.recognitionFailed, "the scan failed: \(type(of: error))"))
        }
    }
}

/// The JSON shape of `scan --json`, one per image.
struct ScanJSON: Encodable {
    struct ExpiryJSON: Encodable {
        let month: Int
        let year: Int
    }

    /// A whole number read that is not reported as the card's: masked, why, and the digits
    /// only with --reveal.
    struct UnverifiedJSON: Encodable {
        let masked: String
        let reason: String
        let digits: String?
    }

    struct SpecimenJSON: Encodable {
        let reason: String
        let word: String?
        let message: String
    }

    let file: String
    let status: String
    let panMasked: String?
    let pan: String?
    let brand: String?
    let expiry: ExpiryJSON?
    let confidence: Double
    let ms: Double
    let holder: String?
    let unverified: UnverifiedJSON?
    /// Why the card is a sample (status `specimen`): `{"reason", "word"?}`.
    let specimen: SpecimenJSON?
    let error: ErrorJSON?
    /// `scan` or `manual`; only with --manual-fallback.
    let source: String?
    /// Each stage's milliseconds and calls; only with --timings.
    private(set) var timings: [String: StageJSON]? = nil
    /// What the stages leave of `ms`: the scanner's own work; only with --timings.
    private(set) var otherMs: Double? = nil
    /// Each phase's milliseconds (number, expiry, holder, specimen, tesseract_route); only with --timings.
    private(set) var phases: [String: Double]? = nil

    struct StageJSON: Encodable {
        let ms: Double
        let calls: Int
    }

    init(_ outcome: ScanOutcome, reveal: Bool, showSource: Bool = false, timings showTimings: Bool = false) {
        file = outcome.file
        source = showSource ? outcome.source.rawValue : nil
        switch outcome.result {
        case .success(let result):
            if showTimings {
                timings = Dictionary(
                    uniqueKeysWithValues: result.timings.map { stage, entry in
                        (stage.rawValue, StageJSON(ms: Self.tenths(entry.milliseconds), calls: entry.calls))
                    }
                )
                otherMs = Self.tenths(result.milliseconds - result.timings.values.reduce(0) { $0 + $1.milliseconds })
                phases = Dictionary(uniqueKeysWithValues: result.phases.map { ($0.key.rawValue, Self.tenths($0.value)) })
            }
            status = result.status.rawValue
            panMasked = result.pan?.masked
            pan = reveal ? result.pan?.revealed : nil
            brand = result.pan?.brand.id
            expiry = result.expiry.map { ExpiryJSON(month: $0.month, year: $0.year) }
            confidence = (result.confidence * 1000).rounded() / 1000
            ms = Self.tenths(result.milliseconds)
            holder = result.holder
            unverified = result.unverified.map {
                UnverifiedJSON(masked: $0.masked, reason: $0.reason.rawValue, digits: reveal ? $0.revealed : nil)
            }
            specimen = result.specimen.map { SpecimenJSON(reason: $0.reason.rawValue, word: $0.word, message: $0.explanation) }
            error = nil
        case .failure(let failure):
            status = "error"
            panMasked = nil
            pan = nil
            brand = nil
            expiry = nil
            confidence = 0
            ms = 0
            holder = nil
            unverified = nil
            specimen = nil
            error = ErrorJSON(code: failure.code.rawValue, message: failure.message)
        }
    }

    static func tenths(_ milliseconds: Double) -> Double { (milliseconds * 10).rounded() / 10 }

    enum CodingKeys: String, CodingKey {
        case file, status, panMasked, pan, brand, expiry, confidence, ms, holder, unverified, specimen, error, source, timings, otherMs, phases
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(status, forKey: .status)
        try container.encode(panMasked, forKey: .panMasked)
        try container.encodeIfPresent(pan, forKey: .pan)
        try container.encode(brand, forKey: .brand)
        try container.encode(expiry, forKey: .expiry)
        try container.encode(confidence, forKey: .confidence)
        try container.encode(ms, forKey: .ms)
        try container.encodeIfPresent(holder, forKey: .holder)
        try container.encodeIfPresent(unverified, forKey: .unverified)
        try container.encodeIfPresent(specimen, forKey: .specimen)
        try container.encodeIfPresent(error, forKey: .error)
        try container.encodeIfPresent(source, forKey: .source)
        try container.encodeIfPresent(timings, forKey: .timings)
        try container.encodeIfPresent(otherMs, forKey: .otherMs)
        try container.encodeIfPresent(phases, forKey: .phases)
    }
}

/// One row of the readable table.
struct ScanRow {
    static let header =
        pad("FILE", 34) + pad("STATUS", 11) + pad("NUMBER", 21) + pad("BRAND", 12) + pad("EXPIRY", 9)
        + pad("CONF", 6) + "MS"

    let text: String

    init(_ outcome: ScanOutcome, reveal: Bool) {
        let json = ScanJSON(outcome, reveal: reveal)
        let expiry = json.expiry.map { ($0.month < 10 ? "0" : "") + "\($0.month)/\($0.year % 100)" } ?? "-"
        let status = outcome.source == .manual ? "entered" : json.status
        var text = Self.pad(json.file.split(separator: "/").last.map(String.init) ?? json.file, 34) + Self.pad(status, 11)
        if let error = json.error {
            text += "\(error.code): \(error.message)"
        } else {
            // An unverified number is shown with a question mark: read, not a card.
            let unverified = json.unverified.map { ($0.digits ?? $0.masked) + "?" }
            let sample = json.specimen.map { "sample: " + ($0.word ?? "its number") }
            text +=
                Self.pad(json.pan ?? json.panMasked ?? unverified ?? sample ?? "-", 21) + Self.pad(json.brand ?? "-", 12) + Self.pad(expiry, 9)
                + Self.pad(Columns.decimal(json.confidence, 2), 6) + String(Int(json.ms.rounded()))
        }
        self.text = text
    }

    /// Left-aligned in `width`, and never touching the next column.
    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : Columns.pad(text, width)
    }
}
