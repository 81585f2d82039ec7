import CardCapture
public import Foundation
public import Hummingbird
import Logging
public import NIOCore
import Payments
import Synchronization
public import Tokenizer

/// The context of one API request: who is calling (set by ``AuthMiddleware``) and the request id.
public struct APIContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The caller's key, once authenticated.
    public var apiKey: APIKeyRecord?
    /// `req_…`, in the `Request-Id` header and every log line of the request.
    public var requestID: String
    /// What inner middleware learns for the request's log line (the merchant).
    let notes = RequestNotes()
    /// The connected peer's address (rate limits count by it); nil in router tests.
    public let remoteAddress: SocketAddress?
    /// The request's connection.
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
        self.remoteAddress = source.channel.remoteAddress
        // Not put in the logger's metadata (a copy of it per request): the request's log lines
        // name it themselves.
        self.requestID = ObjectID.random(.request).rawValue
    }

    public var requestDecoder: JSONDecoder { APIJSON.decoder }
    public var responseEncoder: JSONEncoder { APIJSON.encoder }

    /// Card photos run to megabytes; JSON bodies are held to ``APIBody/jsonLimit`` by the routes.
    public var maxUploadSize: Int { 10 * 1024 * 1024 }

    /// The switch that calls off a scan for this request once its client has gone (kept by the
    /// connection's ``ConnectionGuard``); nil where the connection has none (router tests).
    func clientGone() async -> ScanCancellation? {
        let channel = channel
        return try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: ConnectionGuard.self).clientGone
        }.get()
    }

    /// The authenticated merchant's id; routes behind ``AuthMiddleware`` always have one.
    func merchantID() throws -> String {
        guard let apiKey else { throw APIError.missingKey() }
        return apiKey.merchantID
    }

    /// The merchant's id, when the caller used its secret key; 403 for a publishable key.
    func secretMerchantID() throws -> String {
        guard let apiKey else { throw APIError.missingKey() }
        guard apiKey.kind == .secret else { throw APIError.secretKeyRequired() }
        return apiKey.merchantID
    }
}

/// Shared between the middleware layers of one request: the request log is written by the
/// outermost layer, the merchant is known only inside the authentication layer.
final class RequestNotes: Sendable {
    private let merchant = Mutex<String?>(nil)

    var merchantID: String? {
        get { merchant.withLock { $0 } }
        set { merchant.withLock { $0 = newValue } }
    }
}
