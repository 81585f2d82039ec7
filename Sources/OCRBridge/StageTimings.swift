import Synchronization

/// Where one scan's time goes: the milliseconds and calls of each stage (decoding, finding the
/// card, the text detector, each recognizer, Tesseract), added up while the scan runs.
///
/// A scan installs its own as ``current`` (a task-local value, also seen by synchronous code
/// the scan calls); the engines time their work into it with ``measure(_:_:)``, and do nothing
/// when none is installed. Only the innermost work is measured (one inference, one Tesseract
/// call), so no stage's time holds another's; what no stage holds (geometry, scaling,
/// decoding the readings) is the scan's total less the sum.
///
/// ```swift
/// let timings = StageTimings()
/// let result = try StageTimings.$current.withValue(timings) { try scanner.scan(bitmap) }
/// print(timings.entries[.detect]?.milliseconds ?? 0)
/// ```
public final class StageTimings: Sendable {
    /// A kind of work a scan does.
    public enum Stage: String, Sendable, CaseIterable, Comparable {
        /// Reading the image file into pixels (PNG, JPEG).
        case decode
        /// Finding the card's outline in the picture (the classic edge locator).
        case locate
        /// The project's number-row detector finding the card's number row in the picture.
        case findRows = "find_rows"
        /// The learned text detector finding lines on a card.
        case detect
        /// The project's card-digit recognizer.
        case readDigits = "read_digits"
        /// PP-OCRv4's general recognizer.
        case readText = "read_text"
        /// Tesseract, any model.
        case tesseract

        public static func < (one: Stage, other: Stage) -> Bool {
            allCases.firstIndex(of: one)! < allCases.firstIndex(of: other)!
        }
    }

    /// The time one stage took over a scan, and how many times it ran.
    public struct Entry: Sendable, Equatable {
        public var milliseconds: Double
        public var calls: Int

        public init(milliseconds: Double = 0, calls: Int = 0) {
            self.milliseconds = milliseconds
            self.calls = calls
        }

        /// Counts one more run, of `duration`.
        mutating func add(_ duration: Duration) {
            milliseconds += duration.milliseconds
            calls += 1
        }
    }

    /// The timings the work on this task or thread adds to, if any.
    @TaskLocal public static var current: StageTimings?

    private let recorded = Mutex<[Stage: Entry]>([:])
    private let recordedPhases = Mutex<[String: Entry]>([:])

    public init() {}

    /// What has been recorded so far, by stage.
    public var entries: [Stage: Entry] { recorded.withLock { $0 } }

    /// The caller's own phases (for a scan: finding the number, its date, ...), which hold
    /// stages: their wall time, by name.
    public var phases: [String: Entry] { recordedPhases.withLock { $0 } }

    /// Runs `body`, adding its wall time to the phase named `phase` of the ``current`` timings
    /// (when there are any). Phases may hold stages and one another.
    public static func measure<Result, Failure: Error>(
        phase: String,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let start = ContinuousClock.now
        defer { add(phase: phase, since: start) }
        return try body()
    }

    /// Adds the time from `start` until now to the phase named `phase` of the ``current``
    /// timings (when there are any): for a phase that is a stretch of code rather than a call.
    public static func add(phase: String, since start: ContinuousClock.Instant) {
        let duration = ContinuousClock.now - start
        current?.recordedPhases.withLock { $0[phase, default: Entry()].add(duration) }
    }

    /// Adds one run of `stage` that took `duration`.
    public func add(_ stage: Stage, _ duration: Duration) {
        recorded.withLock { $0[stage, default: Entry()].add(duration) }
    }

    /// Adds one run of `stage`, from `start` until now, to the ``current`` timings (when there
    /// are any): for work that is a stretch of a function rather than a call.
    public static func add(_ stage: Stage, since start: ContinuousClock.Instant) {
        current?.add(stage, ContinuousClock.now - start)
    }

    /// Runs `body`, adding its time to `stage` of the ``current`` timings (when there are any).
    public static func measure<Result, Failure: Error>(
        _ stage: Stage,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let start = ContinuousClock.now
        defer { add(stage, since: start) }
        return try body()
    }
}

extension Duration {
    /// The duration in milliseconds.
    var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}
