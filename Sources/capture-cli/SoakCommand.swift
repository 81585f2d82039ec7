import ArgumentParser
import Crypto
import Foundation
import Payments
import SQLiteVault
import Synchronization
import Tokenizer

/// `capture-cli soak` (not in the help): the charge path run for a long time, to watch the
/// process's memory. A new SQLite vault in a temporary folder, one merchant, and `--charges`
/// token-and-charge pairs through the same `Payments` the server uses, with the sandbox
/// processor on a journal as `serve` runs it (or, with `--in-memory-sandbox`, the sandbox that
/// keeps every authorization in memory, as it did before). Prints a JSON line every
/// `--sample` charges: charges so far, seconds, resident memory, authorizations in memory.
struct SoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Charge many times through a new vault and print the process's memory as it goes.",
        shouldDisplay: false
    )

    @Option(help: "Charges to make.")
    var charges = 1_000_000

    @Option(help: "Charges a second at most (0: as fast as the machine goes).")
    var rate = 0

    @Option(help: "Print a line every this many charges.")
    var sample = 50_000

    @Option(help: "Charges on their way at once.")
    var workers = 8

    @Flag(name: .customLong("in-memory-sandbox"), help: "The sandbox without a journal, remembering every authorization.")
    var inMemorySandbox = false

    func validate() throws {
        guard charges >= 1, sample >= 1, workers >= 1, rate >= 0 else {
            throw ValidationError("--charges, --sample and --workers must be at least 1, --rate at least 0")
        }
    }

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("capture-soak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteVaultStore(path: folder.appendingPathComponent("vault.sqlite").path)
        let vault = try await Vault.open(store: store, keys: KeyRing(masterKey: SymmetricKey(size: .bits256)))
        let merchant = try await vault.createMerchant(named: "soak").merchant.id
        let sandbox = inMemorySandbox ? SandboxProcessor() : try SandboxProcessor(journal: folder.appendingPathComponent("sandbox").path)
        let payments = Payments(vault: vault, processor: sandbox)
        let card = CardInput(number: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123")
        let made = Counter()
        let start = ContinuousClock.now
        let (charges, sample, rate, workers) = (charges, sample, rate, workers)
        Self.report(0, start: start, sandbox: sandbox)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    while true {
                        let number = made.next()
                        guard number <= charges else { return }
                        if rate > 0 {
                            // The charge's place in a schedule of `rate` a second.
                            let due = start + .nanoseconds(Int64(number) * 1_000_000_000 / Int64(rate))
                            if due > .now { try await Task.sleep(until: due) }
                        }
                        let token = try await vault.createToken(for: merchant, card: card)
                        let charged = try await payments.charge(.init(token: token.id, amount: 500, currency: "EUR"), merchantID: merchant)
                        guard charged.status == "succeeded" else { throw ValidationError("charge \(number) was \(charged.status)") }
                        if number % sample == 0 { Self.report(number, start: start, sandbox: sandbox) }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    static func report(_ charges: Int, start: ContinuousClock.Instant, sandbox: SandboxProcessor) {
        let elapsed = ContinuousClock.now - start
        let line: [String: Any] = [
            "charges": charges,
            "seconds": Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            "rss_mib": Double(residentKiB()) / 1024,
            "authorizations_in_memory": sandbox.rememberedAuthorizations,
        ]
        if let data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) {
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        }
    }

    /// The process's resident set, from /proc/self/status (VmRSS, KiB).
    static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

/// The charges started so far, over every worker.
private final class Counter: Sendable {
    private let value = Atomic<Int>(0)

    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
}
