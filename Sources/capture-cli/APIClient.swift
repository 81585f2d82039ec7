import ArgumentParser
import AsyncHTTPClient
import CaptureClient
import Foundation
import HTTPTypes
import NIOCore
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Synchronization

/// Where the API is and which key to use: the options `tokenize` and `charge` share.
struct ServerOptions: ParsableArguments {
    @Option(help: "The API's base URL.")
    var server = "http://127.0.0.1:8080"

    @Option(help: "The API key (pk_… or sk_…); defaults to $CAPTURE_API_KEY.")
    var key: String?

    @Flag(help: "Print the server's JSON answer instead of text.")
    var json = false

    func client() throws -> APIClient {
        try APIClient(server: server, key: key)
    }
}

/// The API as the command line calls it: through CaptureClient, the package's Swift client
/// generated from openapi.json (so the document cannot drift from what the project uses), over
/// AsyncHTTPClient, with the command line's way of ending on an error.
struct APIClient {
    let capture: CaptureClient
    private let answers = LastAnswer()

    /// A client of the API at `server`, with `key` or else `$CAPTURE_API_KEY`.
    ///
    /// - Throws: `ValidationError` for a URL that is not http(s) or no key.
    init(server: String, key: String?) throws {
        guard let base = URL(string: server), base.scheme == "http" || base.scheme == "https", base.host != nil else {
            throw ValidationError("--server must be an http:// or https:// URL, such as http://127.0.0.1:8080")
        }
        guard let key = key ?? ProcessInfo.processInfo.environment["CAPTURE_API_KEY"], !key.isEmpty else {
            throw ValidationError("give --key or set CAPTURE_API_KEY (keys come from `capture-cli keys create`)")
        }
        capture = CaptureClient(
            server: base,
            key: key,
            transport: AsyncHTTPClientTransport(configuration: .init(client: Self.http, timeout: .seconds(60))),
            // AsyncHTTPClient tries to connect until its connect timeout: a server that cannot be
            // reached is said after that, not after each retry's.
            retry: RetryPolicy(retriesNetworkError: { !Self.neverConnected($0) }),
            middlewares: [answers]
        )
    }

    /// One HTTP client for the process, that follows no redirect (the key must not go to
    /// another host a server points at). It lives as long as the process.
    private static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(5))
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// What `operation` returns, with the body as the server sent it (for `--json`). An error
    /// answer is printed and ends the command: status 1 for a card the API refused, 2 for the
    /// rest. A request that got no answer says it may have been carried out, and `retry` (how
    /// to ask again safely) when given.
    func call<Result>(retry: String? = nil, _ operation: (Client) async throws -> Result) async throws -> (Result, Data) {
        do {
            let result = try await capture.call(operation)
            return (result, answers.take())
        } catch {
            Terminal.writeError("capture-cli: " + explanation(of: error, retry: retry))
            throw ExitCode(error.isCardError ? 1 : 2)
        }
    }

    /// One line on what went wrong.
    private func explanation(of error: CaptureError, retry: String?) -> String {
        guard error.code == "no_answer" else {
            return error.status == nil || error.type != nil ? "\(error.code): \(error.message)" : error.message
        }
        if let cause = error.underlyingError, Self.neverConnected(cause) {
            return "cannot reach the API at \(capture.server.absoluteString): is `capture-cli serve` running there?"
        }
        let cause = error.underlyingError.map { " (\($0))" } ?? ""
        return "no answer from the API at \(capture.server.absoluteString)\(cause): the request may have been carried out; "
            + (retry ?? "look before you try again")
    }

    /// Whether `error` says no connection was made, so that nothing was sent.
    private static func neverConnected(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError, error == .connectTimeout { return true }
        if let error = error as? IOError, [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH].contains(error.errnoCode) { return true }
        return false
    }
}

/// Keeps the body of the last answer that came through (the generated code decodes it), so
/// that `--json` prints what the server sent, byte for byte.
final class LastAnswer: ClientMiddleware {
    /// More than any object the API answers with.
    static let largestBody = 8 << 20
    private let body = Mutex(Data())

    func take() -> Data { body.withLock { $0 } }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, answer) = try await next(request, body, baseURL)
        guard let answer else {
            self.body.withLock { $0 = Data() }
            return (response, nil)
        }
        let bytes = try await Data(collecting: answer, upTo: Self.largestBody)
        self.body.withLock { $0 = bytes }
        return (response, HTTPBody(bytes))
    }
}

extension APIClient {
    /// A currency as the API's document lists it (upper case); one it does not list ends the
    /// command before anything is sent.
    static func currency(_ text: String) throws -> Components.Schemas.Currency {
        guard let currency = Components.Schemas.Currency(rawValue: text.uppercased()) else {
            Terminal.writeError("capture-cli: invalid_currency: '\(text.prefix(10))' is not an ISO 4217 currency code the API takes, such as EUR")
            throw ExitCode(2)
        }
        return currency
    }
}
