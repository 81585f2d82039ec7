import CardCapture
import Foundation
import Synchronization
public import Tokenizer

#if canImport(Glibc)
import Glibc
#endif

/// A processor for development and tests: outcomes follow the well-known test numbers, and
/// every other valid card succeeds. No money moves.
///
/// | number | outcome |
/// |---|---|
/// | 4000 0000 0000 0002 | declined, card_declined |
/// | 4000 0000 0000 9995 | declined, insufficient_funds |
/// | 4000 0000 0000 0069 | declined, expired_card |
/// | 4000 0000 0000 0127 | declined, incorrect_cvc |
/// | 4000 0000 0000 0119 | failed, processing_error |
///
/// Like a real processor it remembers every authorization by its reference: the same
/// reference is answered as the first time (never charged twice), and
/// ``outcome(ofAuthorization:)`` finds it. With a journal file the memory survives a restart
/// or a crash of the server, as a real processor's would: each authorization is written there
/// before it is answered. The journal is then the record, and memory holds only the latest
/// ``recentCapacity`` authorizations: older ones are read back from the file when asked
/// for, so a long-running server's memory stays flat however many charges it makes.
public struct SandboxProcessor: Processor {
    private let ledger: Ledger
    /// How long an authorization takes, as a real processor's network round trip: half
    /// before the card is charged, half after. Zero by default; crash tests use it to stop
    /// the server while charges are in flight.
    public var latency: Duration = .zero

    /// Authorizations kept in memory beside the journal: the latest, which a retry or a
    /// recovery asks about; older ones are read from the file.
    public static let recentCapacity = 10_000

    /// A sandbox that remembers authorizations in memory for the life of the process (tests).
    public init() {
        ledger = Ledger(journal: nil, path: nil, capacity: Int.max)
    }

    /// A sandbox that keeps its authorizations in `journal` (created 0600 if missing; one that
    /// exists is read back as it is asked about), the latest `recent` of them in memory too.
    public init(journal path: String, latency: Duration = .zero, recent: Int = Self.recentCapacity) throws {
        self.latency = latency
        let descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SandboxJournalError(path: path, errno: errno) }
        // A line cut short by a crash is ended, so that the next one starts on its own.
        var last: UInt8 = 0
        let size = lseek(descriptor, 0, SEEK_END)
        if size > 0, pread(descriptor, &last, 1, size - 1) == 1, last != UInt8(ascii: "\n") {
            _ = write(descriptor, "\n", 1)
        }
        ledger = Ledger(journal: descriptor, path: path, capacity: max(1, recent))
    }

    static let outcomes: [String: AuthorizationOutcome] = [
        "4000000000000002": .declined(code: "card_declined"),
        "4000000000009995": .declined(code: "insufficient_funds"),
        "4000000000000069": .declined(code: "expired_card"),
        "4000000000000127": .declined(code: "incorrect_cvc"),
        "4000000000000119": .failed(code: "processing_error"),
    ]

    public func authorize(_ request: AuthorizationRequest) async throws -> AuthorizationOutcome {
        if latency > .zero { try await Task.sleep(for: latency / 2) }
        let outcome = try ledger.record(request.reference) {
            Self.outcomes[request.pan.revealed] ?? .succeeded(reference: "sandbox_" + ObjectID.random(.transaction).rawValue.dropFirst(5))
        }
        // The card is charged: the answer is given, whatever happens to the waiting caller.
        if latency > .zero { try? await Task.sleep(for: latency / 2) }
        return outcome
    }

    public func outcome(ofAuthorization reference: String) async throws -> AuthorizationOutcome? {
        ledger.outcome(of: reference)
    }

    public func refund(reference: String, amount: Int, currency: Currency) async throws {}

    /// In the process, and written to the journal before it is answered: its latency.
    public var longestAuthorization: Duration? { latency }

    /// How many authorizations are held in memory now (with a journal, at most
    /// ``recentCapacity``).
    public var rememberedAuthorizations: Int { ledger.remembered }

    /// The authorizations seen, by reference, and the journal they are written to.
    final class Ledger: Sendable {
        private let journal: Journal?
        /// The journal's file: servers that share a vault share the sandbox through it.
        private let path: String?
        private let recent: Mutex<Recent>

        /// The latest authorizations, and since when every one this process recorded is among
        /// them.
        struct Recent {
            var entries: [String: AuthorizationOutcome] = [:]
            /// References in the order they were recorded, a ring of `capacity`.
            var order: [(reference: String, at: Date)] = []
            var next = 0
            let capacity: Int
            var completeSince: Date

            /// Keeps an authorization, forgetting the oldest at capacity.
            mutating func insert(_ reference: String, _ outcome: AuthorizationOutcome, at date: Date) {
                guard entries.updateValue(outcome, forKey: reference) == nil else { return }
                if order.count < capacity {
                    order.append((reference, date))
                    return
                }
                let oldest = order[next]
                entries[oldest.reference] = nil
                completeSince = oldest.at
                order[next] = (reference, date)
                next = (next + 1) % capacity
            }
        }

        init(journal: Int32?, path: String?, capacity: Int) {
            self.journal = journal.map(Journal.init)
            self.path = path
            self.recent = Mutex(Recent(capacity: capacity, completeSince: Date()))
        }

        var remembered: Int { recent.withLock { $0.entries.count } }

        /// The outcome of an authorization made here, or by another server writing to the same
        /// journal (read from the file for a reference not in memory), as a real processor
        /// answers whichever server asks.
        func outcome(of reference: String) -> AuthorizationOutcome? {
            if let known = recent.withLock({ $0.entries[reference] }) { return known }
            guard let path, let written = Self.find(reference, in: path) else { return nil }
            recent.withLock { $0.insert(reference, written, at: Date()) }
            return written
        }

        /// The outcome already recorded for `reference`, or `decide()`'s, recorded (and written
        /// to the journal) before it is returned.
        func record(_ reference: String, decide: () -> AuthorizationOutcome) throws -> AuthorizationOutcome {
            try recent.withLock { recent in
                if let known = recent.entries[reference] { return known }
                // A transaction id made after every authorization still in memory cannot have
                // been authorized before (by this process); any other is looked for in the file.
                if let path, !Self.madeAfter(reference, recent.completeSince), let written = Self.find(reference, in: path) {
                    recent.insert(reference, written, at: Date())
                    return written
                }
                let outcome = decide()
                // Written under the lock, so a second call for the reference finds it before
                // it is answered. A failed write was never answered, never charged: forgotten,
                // as by a processor that lost the call.
                try journal?.append(Array((Self.line(reference, outcome) + "\n").utf8))
                recent.insert(reference, outcome, at: Date())
                return outcome
            }
        }

        /// Whether `reference` is a transaction id made after `date` (its first 8 digits are
        /// the millisecond it was made).
        static func madeAfter(_ reference: String, _ date: Date) -> Bool {
            let prefix = ObjectID.Kind.transaction.prefix
            guard reference.utf8.count == prefix.utf8.count + ObjectID.timeLength + ObjectID.randomLength, reference.hasPrefix(prefix),
                reference.utf8.dropFirst(prefix.utf8.count).allSatisfy({ ObjectID.alphabet.contains($0) })
            else { return false }
            return reference > ObjectID.bound(.transaction, after: date)
        }

        /// The first line for `reference` in the journal at `path`, read a line at a time
        /// (the file is never held whole); nil when there is none, or the file cannot be read.
        static func find(_ reference: String, in path: String) -> AuthorizationOutcome? {
            guard let file = fopen(path, "r") else { return nil }
            defer { fclose(file) }
            let wanted = Array((reference + "\t").utf8)
            var buffer: UnsafeMutablePointer<CChar>?
            var capacity = 0
            defer { free(buffer) }
            while true {
                let length = getline(&buffer, &capacity, file)
                guard length > 0, let buffer else { return nil }
                // A line cut short by a crash mid-write (no newline) was never answered.
                guard length > wanted.count, buffer[length - 1] == 10 else { continue }
                let matches = buffer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
                    wanted.indices.allSatisfy { bytes[$0] == wanted[$0] }
                }
                guard matches else { continue }
                let line = String(decoding: UnsafeRawBufferPointer(start: buffer, count: length - 1), as: UTF8.self)
                if let outcome = parse(line) { return outcome.1 }
            }
        }

        /// The journal file, appended to with one `write` per line. A line is in the file
        /// (the kernel's) before its authorization is answered, so it survives the server's
        /// crash, which is what the sandbox stands in for; it is not synced to the disk: a
        /// sandbox has no money to lose to a power cut, and a real processor's durability is
        /// its own, not a cost of this server.
        final class Journal: Sendable {
            private let descriptor: Int32

            init(descriptor: Int32) {
                self.descriptor = descriptor
            }

            deinit {
                close(descriptor)
            }

            func append(_ line: [UInt8]) throws {
                let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                guard written == line.count else { throw SandboxJournalError(path: "the sandbox journal", errno: errno) }
            }
        }

        /// `reference<TAB>succeeded|declined|failed<TAB>processor reference or code`.
        static func line(_ reference: String, _ outcome: AuthorizationOutcome) -> String {
            switch outcome {
            case .succeeded(let id): "\(reference)\tsucceeded\t\(id)"
            case .declined(let code): "\(reference)\tdeclined\t\(code)"
            case .failed(let code): "\(reference)\tfailed\t\(code)"
            }
        }

        /// A journal line's reference and outcome; nil for anything else.
        static func parse(_ line: String) -> (String, AuthorizationOutcome)? {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3, !fields[0].isEmpty, !fields[2].isEmpty else { return nil }
            switch fields[1] {
            case "succeeded": return (fields[0], .succeeded(reference: fields[2]))
            case "declined": return (fields[0], .declined(code: fields[2]))
            case "failed": return (fields[0], .failed(code: fields[2]))
            default: return nil
            }
        }
    }
}

/// The sandbox's journal could not be opened, read or written.
public struct SandboxJournalError: Error, CustomStringConvertible {
    public let path: String
    public let errno: Int32

    public var description: String {
        "the sandbox processor's journal \(path) cannot be used: \(String(cString: strerror(errno)))"
    }
}
