import Hummingbird
import NIOCore
import Synchronization

/// Reads and throws away a large request body that the route answered without reading (a
/// 413 from the declared length, a 429, a 401), before the answer goes out.
///
/// A client that sends its whole body before it reads the answer (Python's urllib, most
/// HTTP libraries) would otherwise block on a full socket and never see it: with
/// `Connection: close` the server does not read the rest itself. As nginx's lingering close
/// does, the rest is read and dropped, up to ``bound`` bytes and ``timeLimit``; nothing of it
/// is kept. Bodies small enough for the socket's buffers are left alone (no cost on the API's
/// JSON requests); a body declared larger than the bound is not waited for.
struct BodyDrainMiddleware: RouterMiddleware {
    typealias Context = APIContext

    /// Bodies up to this size fit in the sockets' buffers: the client never blocks on them.
    static let smallBody = 128 * 1024
    /// The most that is read and dropped for one request.
    static let bound = 64 * 1024 * 1024
    static let timeLimit = Duration.seconds(10)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.mayBlockClient(request.headers) else { return try await next(request, context) }
        let tracker = BodyTracker()
        var tracked = request
        tracked.body = RequestBody(asyncSequence: TrackedBody(base: request.body, tracker: tracker))
        do {
            let response = try await next(tracked, context)
            if !tracker.started { await Self.discard(request.body) }
            return response
        } catch {
            if !tracker.started { await Self.discard(request.body) }
            throw error
        }
    }

    /// Whether the body may be too large for the sockets' buffers, and small enough to read.
    static func mayBlockClient(_ headers: HTTPFields) -> Bool {
        if let length = headers[.contentLength] {
            guard let declared = Int(length) else { return false }
            return declared > smallBody && declared <= bound
        }
        // No length: chunked, of any size.
        return headers[.transferEncoding] != nil
    }

    /// Reads the body to its end and drops it, within ``bound`` and ``timeLimit``.
    static func discard(_ body: RequestBody) async {
        var chunks = body.makeAsyncIterator()
        await discardRest(of: &chunks, alreadyRead: 0)
    }

    /// Reads what is left of a body and drops it, until ``bound`` bytes in all have been read
    /// or ``timeLimit`` has passed; a client that goes away ends it too.
    static func discardRest(of chunks: inout RequestBody.AsyncIterator, alreadyRead: Int) async {
        let deadline = ContinuousClock.now + timeLimit
        var read = alreadyRead
        while read <= bound, ContinuousClock.now < deadline, let chunk = try? await chunks.next() {
            read += chunk.readableBytes
        }
    }
}

/// Whether a route has begun reading a request body (it can be read once).
final class BodyTracker: Sendable {
    private let begun = Atomic(false)
    var started: Bool { begun.load(ordering: .acquiring) }
    func start() { begun.store(true, ordering: .releasing) }
}

/// A request body that notes when its reading begins.
struct TrackedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: RequestBody
    let tracker: BodyTracker

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        mutating func next() async throws -> ByteBuffer? { try await base.next() }
    }

    func makeAsyncIterator() -> AsyncIterator {
        tracker.start()
        return AsyncIterator(base: base.makeAsyncIterator())
    }
}
