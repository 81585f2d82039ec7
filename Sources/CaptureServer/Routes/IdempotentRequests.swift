import Foundation
import HTTPTypes
import Hummingbird
import Payments
import Tokenizer

/// `Idempotency-Key` on every POST: a request sent again with the same key and body gets the
/// first answer (`Idempotent-Replayed: true`) and runs nothing twice; another body with the key
/// is 422 `idempotency_key_reused` (as the IETF Idempotency-Key draft has it); a key whose request is still running is 409
/// `idempotency_key_in_use`; a key whose answer is not kept (stored before answers were sealed,
/// or under another vault key) is 409 `idempotency_key_answer_unavailable`, and its request does
/// not run again. Without the header a request simply runs.
struct IdempotentRequests: Sendable {
    let keys: IdempotencyKeys

    static let keyHeader = HTTPField.Name("Idempotency-Key")!
    static let replayedHeader = HTTPField.Name("Idempotent-Replayed")!

    /// Runs `operation` once per key for the request whose body is `body`.
    ///
    /// - Parameter recover: for requests that record charges: the answer for a key whose first
    ///   request died after recording the charge with this transaction id.
    func run(
        _ request: Request,
        merchantID: String,
        body: [UInt8],
        recover: ((String) async throws -> (HTTPResponse.Status, Data))? = nil,
        _ operation: () async throws -> (HTTPResponse.Status, Data)
    ) async throws -> Response {
        try await run(request, merchantID: merchantID, body: body, recover: recover, keeping: { _ in try await operation() })
    }

    /// Runs `operation` once per key, as the other `run`, giving it the key's
    /// ``IdempotencyKeys/Keeper`` (nil without a key) to keep its answer in its own write, and,
    /// with `claimInFirstWrite`, to claim the key in its first write (see
    /// ``IdempotencyKeys/run(merchantID:key:request:recover:claimInFirstWrite:keeping:)``).
    func run(
        _ request: Request,
        merchantID: String,
        body: [UInt8],
        recover: ((String) async throws -> (HTTPResponse.Status, Data))? = nil,
        claimInFirstWrite: Bool = false,
        keeping operation: (IdempotencyKeys.Keeper?) async throws -> (HTTPResponse.Status, Data)
    ) async throws -> Response {
        guard let key = request.headers[Self.keyHeader] else {
            let (status, answer) = try await APIError.mapping { try await operation(nil) }
            return Self.response(status, answer, replayed: false)
        }
        guard Self.isWellFormed(key) else {
            throw APIError(
                .badRequest,
                .idempotency,
                code: "idempotency_key_invalid",
                message: "Idempotency-Key must be 1 to 255 printable ASCII characters; a UUID is a good key"
            )
        }
        let identity = Array("\(request.method.rawValue) \(request.uri.path)\n".utf8) + body
        let result = try await APIError.mapping {
            try await keys.run(
                merchantID: merchantID,
                key: key,
                request: identity,
                recover: recover.map { recover in
                    { id in
                        let (status, answer) = try await recover(id)
                        return (Int(status.code), answer)
                    }
                },
                claimInFirstWrite: claimInFirstWrite
            ) { keeper in
                let (status, answer) = try await operation(keeper)
                return (Int(status.code), answer)
            }
        }
        switch result {
        case .answered(let status, let answer, let replayed):
            return Self.response(HTTPResponse.Status(code: status), answer, replayed: replayed)
        case .mismatch:
            throw APIError(
                .unprocessableContent,
                .idempotency,
                code: "idempotency_key_reused",
                message: "this Idempotency-Key was used with another request in the last 24 hours; use a new key for a new request"
            )
        case .inProgress(let retryAfter):
            // Its server may have stopped mid-request: nobody can tell until the lease lapses,
            // and then the retry is answered with what the first request did (or runs it).
            var error = APIError(
                .conflict,
                .idempotency,
                code: "idempotency_key_in_use",
                message: "a request with this Idempotency-Key is still running, or its server stopped before it finished; "
                    + "retry \(retryAfter.map { "in \($0) s, when" } ?? "once") the key's lease has lapsed: the retry then gets what it did"
            )
            error.retryAfter = retryAfter
            throw error
        case .answerUnavailable:
            throw APIError(
                .conflict,
                .idempotency,
                code: "idempotency_key_answer_unavailable",
                message:
                    "the request with this Idempotency-Key ran, but its answer was stored before this vault sealed stored answers, or under another vault key, and cannot be shown again; look up what it made instead of retrying, and use a new key for a new request"
            )
        }
    }

    /// 1 to 255 printable ASCII characters (spaces inside only: HTTP drops them at either end),
    /// as openapi.json's pattern says.
    static func isWellFormed(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard (1...255).contains(bytes.count), bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return false }
        return bytes.first != 0x20 && bytes.last != 0x20
    }

    static func response(_ status: HTTPResponse.Status, _ body: Data, replayed: Bool) -> Response {
        var headers = HTTPFields()
        if replayed { headers[Self.replayedHeader] = "true" }
        return APIJSON.response(status, body, headers: headers)
    }
}
