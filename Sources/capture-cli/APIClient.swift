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
    /// command with status 2 and says which server it tried.
    func send(_ method: String, _ path: String, body: [String: Any]? = nil, idempotencyKey: String? = nil) async throws -> (Int, Data) {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        }
        if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
        do {
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
        } catch {
            Terminal.writeError("capture-cli: cannot reach the API at \(base.absoluteString): is `capture-cli serve` running there?")
            throw ExitCode(2)
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
