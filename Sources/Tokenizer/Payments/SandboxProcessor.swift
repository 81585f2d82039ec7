import CardCapture
import Foundation
import Synchronization

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
/// before it is answered.
public struct SandboxProcessor: Processor {
    private let ledger: Ledger
    /// How long an authorization takes, as a real processor's network round trip: half
    /// before the card is charged, half after. Zero by default; crash tests use it to stop
    /// the server while charges are in flight.
    public var latency: Duration = .zero

    /// A sandbox that remembers authorizations for the life of the process.
    public init() {
        ledger = Ledger(journal: nil, path: nil, entries: [:])
    }

    /// A sandbox that keeps its authorizations in `journal` (created 0600 if missing, read
    /// back when it exists).
    public init(journal path: String, latency: Duration = .zero) throws {
        self.latency = latency
        let entries = try Ledger.read(path)
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SandboxJournalError(path: path, errno: errno) }
        // A line cut short by a crash is ended, so that the next one starts on its own.
        if let data = FileManager.default.contents(atPath: path), let last = data.last, last != UInt8(ascii: "\n") {
            _ = write(descriptor, "\n", 1)
        }
        ledger = Ledger(journal: descriptor, path: path, entries: entries)
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

    /// The authorizations seen, by reference, and the journal they are written to.
    final class Ledger: Sendable {
        private let journal: Journal?
        /// The journal's file: servers that share a vault share the sandbox through it.
        private let path: String?
        private let entries: Mutex<[String: AuthorizationOutcome]>

        init(journal: Int32?, path: String?, entries: [String: AuthorizationOutcome]) {
            self.journal = journal.map(Journal.init)
            self.path = path
            self.entries = Mutex(entries)
        }

        /// The outcome of an authorization made here, or by another server writing to the same
        /// journal (read again for a reference this one has not seen), as a real processor
        /// answers whichever server asks.
        func outcome(of reference: String) -> AuthorizationOutcome? {
            if let known = entries.withLock({ $0[reference] }) { return known }
            guard let path, let written = try? Self.read(path)[reference] else { return nil }
            entries.withLock { $0[reference] = written }
            return written
        }

        /// The outcome already recorded for `reference`, or `decide()`'s, recorded (and written
        /// to the journal) before it is returned.
        func record(_ reference: String, decide: () -> AuthorizationOutcome) throws -> AuthorizationOutcome {
            guard let journal else {
                return entries.withLock { entries in
                    if let known = entries[reference] { return known }
                    let outcome = decide()
                    entries[reference] = outcome
                    return outcome
                }
            }
            return try entries.withLock { entries in
                if let known = entries[reference] { return known }
                let outcome = decide()
                // Written under the lock, so a second call for the reference finds the line
                // there before it is answered. A failed write was never answered, never
                // charged: forgotten, as by a processor that lost the call.
                try journal.append(Array((Self.line(reference, outcome) + "\n").utf8))
                entries[reference] = outcome
                return outcome
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

        static func read(_ path: String) throws -> [String: AuthorizationOutcome] {
            guard FileManager.default.fileExists(atPath: path) else { return [:] }
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw SandboxJournalError(path: path, errno: EIO)
            }
            var entries: [String: AuthorizationOutcome] = [:]
            // A line cut short by a crash mid-write (no newline yet) was never answered: skipped.
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            lines.removeLast()
            for line in lines {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard fields.count == 3, !fields[0].isEmpty, !fields[2].isEmpty else { continue }
                switch fields[1] {
                case "succeeded": entries[fields[0]] = .succeeded(reference: fields[2])
                case "declined": entries[fields[0]] = .declined(code: fields[2])
                case "failed": entries[fields[0]] = .failed(code: fields[2])
                default: continue
                }
            }
            return entries
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
