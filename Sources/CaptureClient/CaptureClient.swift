public import Foundation
import HTTPTypes
public import OpenAPIRuntime

/// The Swift client of the card capture API: every operation of openapi.json, typed (``api``,
/// swift-openapi-generator's ``Client``), with what a payments SDK adds to it:
///
/// - an `Idempotency-Key` made for every POST that has none, and sent again on its retries, so a
///   retried charge is never a second charge;
/// - retries with backoff on network errors, 429, 503 and a key still in use (409 with
///   `Retry-After`), honouring `Retry-After` (``RetryPolicy``);
/// - every error answer thrown as a ``CaptureError`` with the API's type, code and message
///   (``call(_:)``);
/// - lists as an `AsyncSequence` that fetches page after page (``Pages``, ``transactions(client:pageSize:)``);
/// - webhook signatures checked for the merchant's endpoint (``WebhookVerifier``).
///
/// The transport is the app's: `AsyncHTTPClientTransport` on a server, `URLSessionTransport` in
/// an app that tokenizes with its publishable key.
///
/// ```swift
/// let capture = CaptureClient(server: URL(string: "http://127.0.0.1:8080")!, key: "sk_…", transport: AsyncHTTPClientTransport())
/// let transaction = try await capture.call {
///     try await $0.createTransaction(body: .json(.TokenCharge(.init(token: "tok_…", amount: 1999, currency: .eur)))).transaction
/// }
/// ```
public struct CaptureClient: Sendable {
    /// The API's operations as generated from openapi.json, with the key, idempotency, retries
    /// and error answers of this client.
    public let api: Client
    /// Where the API is.
    public let server: URL

    /// A client of the API at `server` (its root, such as `https://pay.example.com`) with `key`
    /// (`sk_…` on a backend, `pk_…` in an app: tokens only).
    ///
    /// - Parameters:
    ///   - retry: when a request is sent again; ``RetryPolicy/none`` never.
    ///   - middlewares: the app's own, run before this client's (to trace, to log). They see each
    ///     request as the app made it, body included: a token request's holds the card number,
    ///     so log no body.
    public init(
        server: URL,
        key: String,
        transport: any ClientTransport,
        retry: RetryPolicy = RetryPolicy(),
        middlewares: [any ClientMiddleware] = []
    ) {
        self.server = server
        api = Client(
            serverURL: server,
            transport: transport,
            middlewares: middlewares + [
                BearerKey(key: key),
                IdempotencyKeys(),
                ErrorAnswers(),
                Retries(policy: retry),
            ]
        )
    }

    /// Runs `operation` on ``api`` and hands back what it returns; anything it throws comes out
    /// as a ``CaptureError``: an error answer with its code and message, no answer (with the
    /// request's Idempotency-Key, to retry it safely), or an answer the document does not allow.
    public func call<Result>(_ operation: (Client) async throws -> Result) async throws(CaptureError) -> Result {
        do {
            return try await operation(api)
        } catch {
            throw CaptureError(error, server: server)
        }
    }
}

extension Operations.CreateTransaction.Output {
    /// The transaction a charge answered with: 201 once it ended (succeeded, declined, failed),
    /// 202 while the processor's answer is awaited (`pending`; read it again later).
    public var transaction: Components.Schemas.Transaction {
        get throws {
            if case .accepted(let pending) = self { return try pending.body.json }
            return try created.body.json
        }
    }
}

/// Every request carries the key as a bearer token.
struct BearerKey: ClientMiddleware {
    let key: String

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(key)"
        return try await next(request, body, baseURL)
    }
}

/// A POST without an `Idempotency-Key` gets a new one, before any retry: every attempt of one
/// call carries the same key, so the server does it once and answers the rest with its answer.
struct IdempotencyKeys: ClientMiddleware {
    static let header = HTTPField.Name("Idempotency-Key")!

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.method == .post, request.headerFields[Self.header] == nil {
            request.headerFields[Self.header] = "sdk_" + UUID().uuidString.lowercased()
        }
        return try await next(request, body, baseURL)
    }
}
