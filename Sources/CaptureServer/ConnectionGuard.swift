import CardCapture
import NIOCore
import NIOHTTPTypes
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Limits on connections, so that slow or idle clients cannot hold the server.
///
/// - Hummingbird's idle timeout (``idleTimeout``) closes a connection that sends nothing for
///   that long, between requests or in the middle of one.
/// - ``headerTimeout``: once a request's first bytes arrive, its head must be complete within
///   this time (a client that trickles a header a byte at a time is closed).
/// - ``bodyTimeout``: a request's body must be read whole within this time of its head.
/// - ``maximumConnections``: at the cap, a new connection closes the connection that has
///   waited longest between requests, else the one whose request's body has been arriving
///   longest (``slowBody`` or more: a client that sent a head and stalls); when every
///   connection is busy otherwise, the new one is closed instead.
/// - ``maximumConnectionsPerAddress``: one client address (not a trusted proxy's) holds at most
///   this many; past it, its own idlest or slowest connection makes room, or the new one is
///   closed. One machine cannot fill the cap for everyone.
public struct ConnectionLimits: Sendable {
    public var idleTimeout: Duration = .seconds(60)
    public var headerTimeout: Duration = .seconds(10)
    public var bodyTimeout: Duration = .seconds(60)
    public var maximumConnections: Int
    public var maximumConnectionsPerAddress: Int
    /// How long a request's body must have been arriving for its connection to be closed to
    /// make room at a cap.
    public var slowBody: Duration = .seconds(2)

    public init(maximumConnections: Int = Self.defaultMaximumConnections, maximumConnectionsPerAddress: Int? = nil) {
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerAddress = maximumConnectionsPerAddress ?? max(8, maximumConnections / 16)
    }

    /// Fewer connections than the process may open files (less a margin for the database,
    /// logs and libraries), at most 10,000.
    public static var defaultMaximumConnections: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_000 }
        let files = Int(clamping: limit.rlim_cur)
        return max(16, min(10_000, files - 64))
    }
}

/// The open connections of one server: which of them wait between requests, which are
/// receiving a request's body, and how many each client address holds.
final class ConnectionRegistry: Sendable {
    let limit: Int
    let perAddress: Int
    let slowBody: Duration

    private struct Entry {
        let channel: any Channel
        /// The client's address; nil for a trusted proxy's connection (many clients' own).
        let address: String?
        /// When it began to wait for a request; nil while a request is read or answered.
        var waitingSince: ContinuousClock.Instant?
        /// When its request's head came, while that request's body is still arriving.
        var receivingSince: ContinuousClock.Instant?
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var byAddress = KeyedCount()

        mutating func remove(_ key: ObjectIdentifier) -> Entry? {
            guard let entry = entries.removeValue(forKey: key) else { return nil }
            if let address = entry.address { byAddress.remove(address) }
            return entry
        }
    }
    private let state = Mutex(State())

    init(limit: Int, perAddress: Int? = nil, slowBody: Duration = .seconds(2)) {
        self.limit = max(1, limit)
        self.perAddress = max(1, perAddress ?? limit)
        self.slowBody = slowBody
    }

    /// Adds a connection from `address` (nil: a trusted proxy's, or unknown); returns false
    /// when it must be closed (every connection it could replace is busy).
    func admit(_ channel: any Channel, address: String? = nil, now: ContinuousClock.Instant = .now) -> Bool {
        let outcome: (admitted: Bool, evicted: (any Channel)?) = state.withLock { state in
            /// The connection to close among `candidates`: the longest idle, else the one whose
            /// body has been arriving longest, ``slowBody`` or more.
            func victim(_ candidates: some Sequence<(key: ObjectIdentifier, value: Entry)>) -> ObjectIdentifier? {
                var idle: (key: ObjectIdentifier, since: ContinuousClock.Instant)?
                var slow: (key: ObjectIdentifier, since: ContinuousClock.Instant)?
                for (key, entry) in candidates {
                    if let since = entry.waitingSince {
                        if idle == nil || since < idle!.since { idle = (key, since) }
                    } else if let since = entry.receivingSince, now - since >= slowBody {
                        if slow == nil || since < slow!.since { slow = (key, since) }
                    }
                }
                return idle?.key ?? slow?.key
            }
            var evicted: (any Channel)?
            if let address, state.byAddress[address] >= perAddress {
                guard let key = victim(state.entries.lazy.filter { $0.value.address == address }) else { return (false, nil) }
                evicted = state.remove(key)?.channel
            } else if state.entries.count >= limit {
                guard let key = victim(state.entries) else { return (false, nil) }
                evicted = state.remove(key)?.channel
            }
            state.entries[ObjectIdentifier(channel)] = Entry(channel: channel, address: address, waitingSince: now)
            if let address { state.byAddress.add(address) }
            return (true, evicted)
        }
        outcome.evicted?.close(promise: nil)
        return outcome.admitted
    }

    func setWaiting(_ channel: any Channel, _ waiting: Bool) {
        state.withLock { state in
            state.entries[ObjectIdentifier(channel)]?.waitingSince = waiting ? .now : nil
        }
    }

    /// Marks the connection's request as receiving its body (from its head to its end).
    func setReceiving(_ channel: any Channel, _ receiving: Bool) {
        state.withLock { state in
            state.entries[ObjectIdentifier(channel)]?.receivingSince = receiving ? .now : nil
        }
    }

    func remove(_ channel: any Channel) {
        _ = state.withLock { $0.remove(ObjectIdentifier(channel)) }
    }
}

/// One connection's guard: admits it under the registry's cap, and closes it when a request's
/// head or body takes too long. Sits after the HTTP decoder (it sees request and response
/// parts) and puts a byte watcher in front of it (to see a request's first bytes).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let registry: ConnectionRegistry
    let limits: ConnectionLimits
    /// Proxies whose connections carry many clients: not counted against one address's share.
    let trustedProxies: TrustedProxies
    private var admitted = false
    /// Between a request's end and the next request's first bytes.
    private var waitingForRequest = true
    private var headDeadline: Scheduled<Void>?
    private var bodyDeadline: Scheduled<Void>?
    /// Called off once the client has closed the connection, or its own side of it while a
    /// request of it was read or answered: the scans it asked for stop (``APIContext/clientGone()``).
    /// A client that half-closes after sending a request is taken to have gone, as proxies do.
    let clientGone = ScanCancellation()

    init(registry: ConnectionRegistry, limits: ConnectionLimits, trustedProxies: TrustedProxies = TrustedProxies()) {
        self.registry = registry
        self.limits = limits
        self.trustedProxies = trustedProxies
    }

    func handlerAdded(context: ChannelHandlerContext) {
        try? context.pipeline.syncOperations.addHandler(ByteWatcher(onBytes: { [weak self] in self?.bytesArrived(context) }), position: .first)
        let peer = context.channel.remoteAddress?.ipAddress
        let address = peer.flatMap { trustedProxies.trusts($0) ? nil : $0 }
        guard registry.admit(context.channel, address: address) else {
            context.close(promise: nil)
            return
        }
        admitted = true
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        clientGone.cancel()
        release(context.channel)
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event, !waitingForRequest { clientGone.cancel() }
        context.fireUserInboundEventTriggered(event)
    }

    /// Takes the connection off the registry and its deadlines off the event loop, once.
    private func release(_ channel: any Channel) {
        headDeadline?.cancel()
        bodyDeadline?.cancel()
        headDeadline = nil
        bodyDeadline = nil
        if admitted { registry.remove(channel) }
        admitted = false
    }

    /// The first bytes of a request: its head has ``ConnectionLimits/headerTimeout`` to come.
    private func bytesArrived(_ context: ChannelHandlerContext) {
        guard waitingForRequest, headDeadline == nil else { return }
        registry.setWaiting(context.channel, false)
        let channel = context.channel
        headDeadline = context.eventLoop.scheduleTask(in: TimeAmount(limits.headerTimeout)) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            waitingForRequest = false
            headDeadline?.cancel()
            headDeadline = nil
            // A pipelined request's head comes after the answer before it marked the
            // connection waiting, with no new bytes to say otherwise.
            registry.setWaiting(context.channel, false)
            registry.setReceiving(context.channel, true)
            let channel = context.channel
            bodyDeadline = context.eventLoop.scheduleTask(in: TimeAmount(limits.bodyTimeout)) { channel.close(promise: nil) }
        case .body:
            break
        case .end:
            bodyDeadline?.cancel()
            bodyDeadline = nil
            registry.setReceiving(context.channel, false)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            waitingForRequest = true
            registry.setWaiting(context.channel, true)
        }
        context.write(data, promise: promise)
    }

}

/// Tells its owner when bytes arrive, before any decoding.
final class ByteWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    let onBytes: () -> Void

    init(onBytes: @escaping () -> Void) {
        self.onBytes = onBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        onBytes()
        context.fireChannelRead(data)
    }
}
