import Foundation
import HTTPTypes
import OpenAPIRuntime

/// When a request is sent again: after a network error (when it is safe: a GET or DELETE, or a
/// request with an Idempotency-Key, which every POST of ``CaptureClient`` has), and after the
/// answers that say to try later: 429, 503, and 409 with `Retry-After` (a request with the same
/// key is still running). The wait is `Retry-After` when the answer gives one, else `firstWait`
/// doubling each time, with jitter, up to `longestWait`; an answer asking to wait longer than
/// `longestWait` is handed back as it is.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included: 1 never retries.
    public var attempts: Int
    public var firstWait: Duration
    public var longestWait: Duration
    /// Whether a request that got no answer, for this error of the transport, is sent again
    /// (when it is safe to). An app whose transport already retries connecting (AsyncHTTPClient
    /// does, until its connect timeout) may leave a failed connection out.
    public var retriesNetworkError: @Sendable (any Error) -> Bool

    public init(
        attempts: Int = 4,
        firstWait: Duration = .milliseconds(500),
        longestWait: Duration = .seconds(30),
        retriesNetworkError: @escaping @Sendable (any Error) -> Bool = { _ in true }
    ) {
        self.attempts = max(1, attempts)
        self.firstWait = firstWait
        self.longestWait = longestWait
        self.retriesNetworkError = retriesNetworkError
    }

    /// One attempt, no retry.
    public static let none = RetryPolicy(attempts: 1)

    /// The wait before attempt `number + 1`, after attempt `number` (from 1) failed; nil for no
    /// retry. `retryAfter`: what the answer asked, in seconds.
    func wait(after number: Int, retryAfter: Int?) -> Duration? {
        guard number < attempts else { return nil }
        if let retryAfter {
            let asked = Duration.seconds(max(0, retryAfter))
            return asked <= longestWait ? asked : nil
        }
        let doubled = firstWait * (1 << min(number - 1, 20))
        let capped = min(doubled, longestWait)
        // Half of it fixed, half random: clients that failed together do not retry together.
        return capped / 2 + capped / 2 * Double.random(in: 0...1)
    }
}

/// Sends a request again as its ``RetryPolicy`` says; the same headers each time, so a POST goes
/// with the same Idempotency-Key.
struct Retries: ClientMiddleware {
    let policy: RetryPolicy
    /// The largest body kept to send again (a card picture is at most a few MB).
    static let largestBody = 64 << 20

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // A body that can be read once is kept, to be sent whole on each attempt.
        var bytes: Data?
        if policy.attempts > 1, let body, body.iterationBehavior == .single {
            bytes = try await Data(collecting: body, upTo: Self.largestBody)
        }
        let safeAfterNetworkError =
            [.get, .head, .delete, .put, .options].contains(request.method) || request.headerFields[IdempotencyKeys.header] != nil
        var attempt = 1
        while true {
            let sent = bytes.map { HTTPBody($0) } ?? body
            let wait: Duration
            do {
                let (response, responseBody) = try await next(request, sent, baseURL)
                let retryAfter = response.retryAfterSeconds
                let again =
                    response.status.code == 429 || response.status.code == 503
                    || (response.status.code == 409 && retryAfter != nil)
                guard again, let next = policy.wait(after: attempt, retryAfter: retryAfter) else { return (response, responseBody) }
                wait = next
            } catch {
                // The runtime wraps what the transport threw, with the operation's input: the
                // cause alone is kept (the input may hold a card number). A call called off is
                // not tried again.
                let cause = (error as? ClientError)?.underlyingError ?? error
                if cause is CancellationError { throw cause }
                guard safeAfterNetworkError, policy.retriesNetworkError(cause), let next = policy.wait(after: attempt, retryAfter: nil) else {
                    throw CaptureError(server: baseURL, noAnswer: cause, idempotencyKey: request.headerFields[IdempotencyKeys.header])
                }
                wait = next
            }
            try await Task.sleep(for: wait)
            attempt += 1
        }
    }
}
