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
///   waited longest between requests; when every connection is in the middle of a request,
///   the new one is closed instead.
public struct ConnectionLimits: Sendable {
    public var idleTimeout: Duration = .seconds(60)
    public var headerTimeout: Duration = .seconds(10)
    public var bodyTimeout: Duration = .seconds(60)
    public var maximumConnections: Int

    public init(maximumConnections: Int = Self.defaultMaximumConnections) {
        self.maximumConnections = maximumConnections
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

/// The open connections of one server, and which of them wait between requests.
final class ConnectionRegistry: Sendable {
    let limit: Int

    private struct Entry {
        let channel: any Channel
        /// When it began to wait for a request; nil while a request is read or answered.
        var waitingSince: ContinuousClock.Instant?
    }
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Adds a connection; returns false when it must be closed (every connection is busy).
    func admit(_ channel: any Channel) -> Bool {
        let outcome: (admitted: Bool, evicted: (any Channel)?) = entries.withLock { entries in
            var evicted: (any Channel)?
            if entries.count >= limit {
                // Make room by closing the connection that has waited longest for a request.
                let waiting = entries.compactMap { key, entry in entry.waitingSince.map { (key: key, since: $0, channel: entry.channel) } }
                guard let oldest = waiting.min(by: { $0.since < $1.since }) else { return (false, nil) }
                entries[oldest.key] = nil
                evicted = oldest.channel
            }
            entries[ObjectIdentifier(channel)] = Entry(channel: channel, waitingSince: .now)
            return (true, evicted)
        }
        outcome.evicted?.close(promise: nil)
        return outcome.admitted
    }

    func setWaiting(_ channel: any Channel, _ waiting: Bool) {
        entries.withLock { entries in
            entries[ObjectIdentifier(channel)]?.waitingSince = waiting ? .now : nil
        }
    }

    func remove(_ channel: any Channel) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
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
    private var admitted = false
    /// Between a request's end and the next request's first bytes.
    private var waitingForRequest = true
    private var headDeadline: Scheduled<Void>?
    private var bodyDeadline: Scheduled<Void>?

    init(registry: ConnectionRegistry, limits: ConnectionLimits) {
        self.registry = registry
        self.limits = limits
    }

    func handlerAdded(context: ChannelHandlerContext) {
        try? context.pipeline.syncOperations.addHandler(ByteWatcher(onBytes: { [weak self] in self?.bytesArrived(context) }), position: .first)
        guard registry.admit(context.channel) else {
            context.close(promise: nil)
            return
        }
        admitted = true
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release(context.channel)
        context.fireChannelInactive()
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
            let channel = context.channel
            bodyDeadline = context.eventLoop.scheduleTask(in: TimeAmount(limits.bodyTimeout)) { channel.close(promise: nil) }
        case .body:
            break
        case .end:
            bodyDeadline?.cancel()
            bodyDeadline = nil
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
