import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Payments
import Tokenizer

/// Answers a request that cannot be read as HTTP/1.1 (a malformed head, a bad or doubled
/// `Content-Length`, bad chunked framing, headers past the limits) with the API's JSON error
/// object and a `Request-Id`, logged as any request is, then closes the connection: left to
/// Hummingbird, such a request gets a 400 with an empty body and no log line.
///
/// Requests read whole before the bad one are answered first (the refusal waits for their
/// responses, in order). An error in the middle of a request's body goes on to that request
/// instead: its route fails reading the body, and the API answers it as JSON.
final class UnreadableRequestResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart
    typealias Refusal = (status: HTTPResponse.Status, code: String, message: String)

    let logger: Logger
    let metrics: APIMetrics
    /// Whether answers carry HSTS (``StrictTransportMiddleware``): the server is reached over https.
    let strictTransport: Bool
    /// Requests whose heads came and whose responses have not ended.
    private var unanswered = 0
    /// Between a request's head and its end.
    private var readingBody = false
    /// The refusal waiting for earlier requests' responses.
    private var waiting: Refusal?
    private var answered = false

    init(logger: Logger, metrics: APIMetrics, strictTransport: Bool = false) {
        self.logger = logger
        self.metrics = metrics
        self.strictTransport = strictTransport
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            readingBody = true
        case .end: readingBody = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let ended: Bool
        if case .end = unwrapOutboundIn(data) { ended = true } else { ended = false }
        context.write(data, promise: promise)
        guard ended else { return }
        unanswered = max(0, unanswered - 1)
        if unanswered == 0, let waiting {
            self.waiting = nil
            answer(waiting, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !answered, waiting == nil, !readingBody, let refusal = Self.refusal(for: error) else {
            context.fireErrorCaught(error)
            return
        }
        if unanswered > 0 {
            waiting = refusal
        } else {
            answer(refusal, context: context)
        }
    }

    /// Writes the refusal, logs it as a request, and closes the connection once it is sent.
    private func answer(_ refusal: Refusal, context: ChannelHandlerContext) {
        answered = true
        let requestID = ObjectID.random(.request).rawValue
        let error = APIError(refusal.status, .invalidRequest, code: refusal.code, message: refusal.message)
        let body = error.body(requestID: requestID)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentLength] = String(body.count)
        headers[.connection] = "close"
        headers[RequestLogMiddleware.requestIDHeader] = requestID
        if strictTransport { headers[StrictTransportMiddleware.header] = StrictTransportMiddleware.value }
        context.write(wrapOutboundOut(.head(HTTPResponse(status: refusal.status, headerFields: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        metrics.request(method: "-", route: "Unreadable", status: refusal.status.code, duration: .zero)
        logger.info(
            "request",
            metadata: [
                "method": "-",
                "path": "-",
                "status": .stringConvertible(refusal.status.code),
                "code": .string(refusal.code),
                "request_id": .string(requestID),
            ]
        )
    }

    /// What to answer for a decoding error; nil for any other error (a reset connection, TLS).
    static func refusal(for error: any Error) -> Refusal? {
        let fix = "; send a well-formed HTTP/1.1 request (the connection is closed)"
        if error is HTTP1TypeConversionError {
            return (.badRequest, "invalid_http_request", "the request's method or path could not be read" + fix)
        }
        guard let parser = error as? HTTPParserError else { return nil }
        switch parser {
        case .headerOverflow:
            return (
                .requestHeaderFieldsTooLarge, "request_headers_too_large",
                "the request's headers are over the server's limit (80 KiB in all); send fewer or shorter headers"
            )
        case .invalidContentLength, .unexpectedContentLength:
            return (
                .badRequest, "invalid_content_length",
                "Content-Length must be one whole number of bytes, given once, and not beside Transfer-Encoding" + fix
            )
        case .invalidChunkSize:
            return (.badRequest, "invalid_transfer_encoding", "the chunked body's framing could not be read" + fix)
        case .invalidURL, .invalidPath, .invalidQueryString, .invalidFragment, .invalidHost, .invalidPort:
            return (.badRequest, "invalid_http_request", "the request's target (its path) could not be read" + fix)
        case .invalidMethod:
            return (.badRequest, "invalid_http_request", "the request's method could not be read" + fix)
        case .invalidVersion:
            return (.httpVersionNotSupported, "http_version_not_supported", "only HTTP/1.0 and HTTP/1.1 are served here")
        default:
            return (.badRequest, "invalid_http_request", "the request could not be read as HTTP/1.1" + fix)
        }
    }
}
