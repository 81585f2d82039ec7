import ArgumentParser
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

/// A small client of the HTTP API for the command line.
struct APIClient {
    let base: URL
    let key: String

    /// A client of the API at `server`, with `key` or else `$CAPTURE_API_KEY`.
    ///
    /// - Throws: `ValidationError` for a URL that is not http(s) or no key.
    init(server: String, key: String?) throws {
        guard let base = URL(string: server), base.scheme == "http" || base.scheme == "https" else {
            throw ValidationError("--server must be an http:// or https:// URL, such as http://127.0.0.1:8080")
        }
        guard let key = key ?? ProcessInfo.processInfo.environment["CAPTURE_API_KEY"], !key.isEmpty else {
            throw ValidationError("give --key or set CAPTURE_API_KEY (keys come from `capture-cli keys create`)")
        }
        self.base = base
        self.key = key
    }

    /// The status and JSON body of a request; a server that cannot be reached ends the
    /// command with status 2 and says which server it tried. A request that got no answer
    /// says it may have been carried out, and how to retry it safely.
    func send(_ method: String, _ path: String, body: [String: Any]? = nil, idempotencyKey: String? = nil) async throws -> (Int, Data) {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        }
        if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await Self.session.data(for: request)
        } catch let error as URLError where method != "GET" && [.timedOut, .networkConnectionLost].contains(error.code) {
            let retry =
                idempotencyKey.map { "run it again with --idempotency-key \($0) to get its result without doing it twice" }
                ?? "look before you try again"
            Terminal.writeError(
                "capture-cli: no answer from the API at \(base.absoluteString) (\(error.code == .timedOut ? "timed out" : "connection lost")): the request may have been carried out; \(retry)"
            )
            throw ExitCode(2)
        } catch {
            Terminal.writeError("capture-cli: cannot reach the API at \(base.absoluteString): is `capture-cli serve` running there?")
            throw ExitCode(2)
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if (300..<400).contains(status) {
            // Followed, the key would go to wherever the redirect points.
            Terminal.writeError(
                "capture-cli: the server at \(base.absoluteString) answered \(status), a redirect; the API never redirects, so it was not followed and the key went nowhere else: check --server"
            )
            throw ExitCode(2)
        }
        return (status, data)
    }

    /// One session for the process, that follows no redirect (the key must not go to another
    /// host a server points at).
    private static let session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)

    private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest,
            completionHandler: @escaping (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }
    }

    /// The body as an object, or the API's error printed and exit status 2 (1 for a card
    /// the server refused).
    static func object(_ status: Int, _ data: Data) throws -> [String: Any] {
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        if (200..<300).contains(status), let object { return object }
        if let error = object?["error"] as? [String: Any] {
            let code = error["code"] as? String ?? "error"
            let message = error["message"] as? String ?? "the server refused the request"
            Terminal.writeError("capture-cli: \(code): \(message)")
            throw ExitCode(error["type"] as? String == "card_error" ? 1 : 2)
        }
        Terminal.writeError("capture-cli: the server answered \(status) without a JSON body")
        throw ExitCode(2)
    }
}
