import CardCapture
public import Foundation
import Synchronization

/// A server, as the holder of the Idempotency-Keys its requests run under. Every ``interval``
/// it notes in the vault that it is alive and vouches for itself for ``grace`` more
/// (``VaultStore/heartbeat(server:aliveUntil:)``); a key held by a server whose heartbeat has
/// run out, or who retired, is taken over by the next retry with it, on any server, without
/// waiting for the key's lease: the server's process died (killed, or its machine gone), and
/// nothing of the request runs any more.
///
/// Safe when the server is alive but cut off from the database, because of how ``grace`` is
/// chosen: a charge goes to the processor only after its spend committed, so while the
/// database answered, and a server that the database answers has written a heartbeat within
/// an interval. A retry that takes its key over asks the processor what became of the charge
/// (``Payments/resolve(_:merchantID:)``) only after that heartbeat ran out, `grace` later, and
/// so after the processor recorded any authorization the server had sent
/// (``Processor/longestAuthorization``).
public final class ServerPresence: Sendable {
    /// A new id for each process (`srv_`, the time it started, then 128 random bits).
    public let id: String
    /// How often the server notes that it is alive.
    public let interval: Duration
    /// How long each heartbeat vouches for the server.
    public let grace: Duration
    private let heard = Atomic<Bool>(false)

    /// The least grace: five missed heartbeats of a second.
    public static let leastGrace = Duration.seconds(5)

    /// A presence for a server whose processor records an authorization within
    /// `longestAuthorization` of its sending; nil when the processor promises no bound (its
    /// keys then stand for their whole lease, as before).
    public init?(longestAuthorization: Duration?, interval: Duration = .seconds(1)) {
        guard let longestAuthorization else { return nil }
        id = ObjectID.random(.server).rawValue
        self.interval = interval
        // An interval for the heartbeat that may have been due when the charge was sent,
        // another for the one on its way, a second to spare, and the authorization's own time.
        grace = max(Self.leastGrace, longestAuthorization + interval * 2 + .seconds(1))
    }

    /// The holder its claims name: nil until the server was first heard from, so that no key
    /// names a holder the other servers would take for gone.
    var holder: String? {
        heard.load(ordering: .acquiring) ? id : nil
    }

    /// Notes that the server is alive at `now`.
    public func beat(_ store: any VaultStore, at now: Date) async throws {
        try await store.heartbeat(server: id, aliveUntil: now.addingTimeInterval(grace.seconds))
        heard.store(true, ordering: .releasing)
    }

    /// Forgets the server, stopping after its requests ended: a key one of them still holds
    /// (its answer could not be written) is taken over by the next retry at once.
    public func retire(_ store: any VaultStore) async throws {
        heard.store(false, ordering: .releasing)
        try await store.retireServer(id)
    }
}
