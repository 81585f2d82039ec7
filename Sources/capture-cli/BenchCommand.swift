import ArgumentParser
import CardCapture

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `capture-cli bench`: the scanner's accuracy and speed on a folder of images with a
/// manifest, against the plain route (tesseract command, regex, Luhn) in the same run.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the scanner's accuracy and speed on a folder of card images with a manifest.",
        discussion: """
            Reports recall (right number / cards with a number), precision (right number / numbers \
            reported), expiry accuracy and median and p95 milliseconds per image, overall and per kind, \
            split and condition, for the scanner with one worker and for the plain route (the tesseract \
            command, a regular expression and the Luhn check), then the scanner's throughput with --jobs \
            workers. Build with -c release for figures that mean anything.
            """
    )

    @Argument(help: "A folder with PNG or JPEG images and a manifest.json.")
    var folder = "Fixtures/cards"

    @Option(help: "Workers for the throughput run (default: the number of cores).")
    var jobs: Int?

    @Flag(help: "Skip the plain-route baseline.")
    var noBaseline = false

    @Option(help: "Which engines read the number: learned (OpenVINO), tesseract (needs no model files) or both.")
    var engine: EngineOption = .both

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    func run() async throws {
        let entries: [FixtureEntry]
        do {
            entries = try FixtureManifest.load(folder: folder)
        } catch {
            Terminal.writeError("capture-cli: cannot read \(folder)/manifest.json: \(error)")
            throw ExitCode(2)
        }
        guard !entries.isEmpty else {
            Terminal.writeError("capture-cli: \(folder)/manifest.json lists no images")
            throw ExitCode(2)
        }
        // One picture at a time first, its inferences on every core; then `--jobs` at once.
        let scanner = try engine.makeScanner(workers: 1)
        let paths = entries.map { "\(folder)/\($0.file)" }
        #if DEBUG
        print("note: a debug build; times are several times a release build's (swift build -c release)")
        #endif
        // Warm up: the engine is loaded before anything is timed.
        _ = try? scanner.scan(contentsOf: paths[0])

        var pipeline = Scoreboard()
        let sequentialStart = ContinuousClock.now
        for (entry, path) in zip(entries, paths) {
            let result = try? scanner.scan(contentsOf: path)
            pipeline.add(
                entry,
                pan: result?.pan?.revealed,
                expiry: result?.expiry.map { ($0.month, $0.year) },
                milliseconds: result?.milliseconds ?? 0
            )
        }
        let sequential = (ContinuousClock.now - sequentialStart).seconds

        var baseline: Scoreboard?
        if !noBaseline {
            if PlainRoute.isAvailable {
                var board = Scoreboard()
                for (entry, path) in zip(entries, paths) {
                    let reading = try PlainRoute.read(path)
                    board.add(entry, pan: reading.pan, expiry: reading.expiry, milliseconds: reading.milliseconds)
                }
                baseline = board
            } else {
                print("note: \(PlainRoute.executable) is missing (apt-get install tesseract-ocr); no baseline")
            }
        }

        let workers = jobs ?? Terminal.coreCount
        let sharing = try engine.makeScanner(workers: workers)
        let parallelStart = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            func start() {
                guard next < paths.count else { return }
                let path = paths[next]
                next += 1
                group.addTask { _ = try? sharing.scan(contentsOf: path) }
            }
            for _ in 0..<workers { start() }
            for await _ in group { start() }
        }
        let parallel = (ContinuousClock.now - parallelStart).seconds

        print("\(entries.count) images in \(folder)")
        print(Self.report("scanner, 1 worker", pipeline))
        if let baseline {
            print(Self.report("plain route (tesseract command, regex, Luhn)", baseline))
            let speed = baseline.overall.medianMilliseconds / pipeline.overall.medianMilliseconds
            print(
                "ratio: median time \(Columns.decimal(speed, 1))x faster; recall \(Columns.decimal(pipeline.overall.recall, 3)) vs "
                    + "\(Columns.decimal(baseline.overall.recall, 3)); precision \(Columns.decimal(pipeline.overall.precision, 3)) vs "
                    + "\(Columns.decimal(baseline.overall.precision, 3))"
            )
        }
        print(
            "throughput: 1 worker \(Columns.decimal(sequential, 1)) s, \(workers) workers \(Columns.decimal(parallel, 1)) s: "
                + "\(Columns.decimal(sequential / parallel, 2))x"
        )
        if !pipeline.overall.wrongFiles.isEmpty {
            print("wrong numbers reported for: \(pipeline.overall.wrongFiles.joined(separator: ", "))")
        }
    }

    static func report(_ title: String, _ board: Scoreboard) -> String {
        var lines = [
            title,
            "  group                  images cards  recall precision  expiry  median ms  p95 ms",
            row("overall", board.overall),
        ]
        for (name, tally) in board.groups.sorted(by: { $0.key < $1.key }) {
            lines.append(row(name, tally))
        }
        return lines.joined(separator: "\n")
    }

    static func row(_ name: String, _ tally: Scoreboard.Tally) -> String {
        "  " + Columns.pad(name, 22) + Columns.pad(String(tally.images), 7, right: true) + Columns.pad(String(tally.cards), 6, right: true)
            + Columns.pad(Columns.decimal(tally.recall, 3), 8, right: true) + Columns.pad(Columns.decimal(tally.precision, 3), 10, right: true)
            + Columns.pad(Columns.decimal(tally.expiryAccuracy, 3), 8, right: true)
            + Columns.pad(Columns.decimal(tally.medianMilliseconds, 1), 11, right: true)
            + Columns.pad(Columns.decimal(tally.p95Milliseconds, 1), 8, right: true)
    }

}
