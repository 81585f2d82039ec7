import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Why a call to the API did not give the answer asked for: the API's own error answer (its
/// `type`, `code`, `message` and `param`, as openapi.json lists them), no answer at all, or an
/// answer the document does not allow.
///
/// Whether money may have moved is in ``outcome``: an error answer means the request changed
/// nothing, except `storage_outcome_unknown` (it may have), a 500, and the answers about a
/// request that went earlier with the same Idempotency-Key (`idempotency_key_in_use`: it is
/// still running; `idempotency_key_answer_unavailable`: it ran); a request that got no answer
/// may have been carried out. Sending it again with the same ``idempotencyKey`` gives its result
/// without doing it twice.
public struct CaptureError: Error, Sendable, CustomStringConvertible {
    public enum Outcome: Sendable, Equatable {
        /// The server answered that nothing was done.
        case nothingDone
        /// It may have been done: no answer came, the server could not tell
        /// (`storage_outcome_unknown`), or the same Idempotency-Key's first request is running or
        /// ran. Send it again with the same Idempotency-Key to know.
        case unknown
    }

    /// The HTTP status of the answer; nil when none came.
    public let status: Int?
    /// The API's error type (`card_error`, `invalid_request_error`, …); nil when there was no
    /// error answer.
    public let type: String?
    /// The API's error code (`invalid_number`, `token_already_used`, …), or this client's:
    /// `no_answer`, `redirect` (the API never redirects, and the key is not sent on),
    /// `unexpected_answer` (a status or body the document does not allow).
    public let code: String
    public let message: String
    /// The request's parameter the error is about.
    public let param: String?
    /// The answer's `Request-Id` (req_…): quote it when asking about a request.
    public let requestID: String?
    /// The seconds the answer asked to wait before trying again.
    public let retryAfter: Int?
    /// The Idempotency-Key the request went with: send the request again with it to get its
    /// first answer rather than doing it twice.
    public let idempotencyKey: String?
    public let outcome: Outcome
    /// What the transport threw, for a request that got no answer.
    public let underlyingError: (any Error)?

    /// A card the API refused (a number no brand issues, an expired card, …): for the buyer to
    /// correct, not for the developer.
    public var isCardError: Bool { type == "card_error" }

    public var description: String {
        var text = "\(code): \(message)"
        if let requestID { text += " (\(requestID))" }
        return text
    }

    init(
        status: Int?,
        type: String? = nil,
        code: String,
        message: String,
        param: String? = nil,
        requestID: String? = nil,
        retryAfter: Int? = nil,
        idempotencyKey: String? = nil,
        outcome: Outcome,
        underlyingError: (any Error)? = nil
    ) {
        self.status = status
        self.type = type
        self.code = code
        self.message = message
        self.param = param
        self.requestID = requestID
        self.retryAfter = retryAfter
        self.idempotencyKey = idempotencyKey
        self.outcome = outcome
        self.underlyingError = underlyingError
    }

    /// What `error`, thrown by a call to the generated client, says. Never the generated
    /// client's own error (`ClientError`), whose description holds the operation's input, card
    /// numbers included.
    init(_ error: any Error, server: URL) {
        let clientError = error as? ClientError
        let cause = clientError?.underlyingError ?? error
        if let known = cause as? CaptureError {
            self = known
            return
        }
        guard let clientError else {
            // Thrown by the caller's code after the answer came: another documented answer than
            // the one it read (`.created` of a charge answered 202 while pending).
            self.init(
                status: nil,
                code: "unexpected_answer",
                message: "the API at \(server.absoluteString) answered, but not with the answer this call reads (\(Swift.type(of: error)))",
                outcome: .unknown,
                underlyingError: error
            )
            return
        }
        if cause is DecodingError {
            self.init(
                status: clientError.response.map { $0.status.code },
                code: "unexpected_answer",
                message: "the API at \(server.absoluteString) answered with a body this client cannot read: \(cause)",
                outcome: .unknown
            )
        } else if let response = clientError.response {
            self.init(
                status: response.status.code,
                code: "unexpected_answer",
                message:
                    "the API at \(server.absoluteString) answered \(response.status.code), an answer openapi.json does not list for this request",
                outcome: .unknown
            )
        } else {
            self.init(server: server, noAnswer: cause, idempotencyKey: clientError.request?.headerFields[IdempotencyKeys.header])
        }
    }

    /// A request that got no answer: it may have been carried out.
    init(server: URL, noAnswer cause: any Error, idempotencyKey: String?) {
        let retry =
            idempotencyKey.map { "send it again with Idempotency-Key \($0) to get its result without doing it twice" }
            ?? "look before you try again"
        self.init(
            status: nil,
            code: "no_answer",
            message: "no answer from the API at \(server.absoluteString) (\(cause)): the request may have been carried out; \(retry)",
            idempotencyKey: idempotencyKey,
            outcome: .unknown,
            underlyingError: cause
        )
    }
}

extension CaptureError {
    /// What an error answer says of money: the API's 4xx and 503s change nothing, except the 503
    /// that says it cannot tell and the 409s about a same-key request that is running or ran; a
    /// 500 is a fault whose effect is not known.
    static func outcome(status: Int, code: String) -> Outcome {
        if ["storage_outcome_unknown", "idempotency_key_in_use", "idempotency_key_answer_unavailable"].contains(code) { return .unknown }
        return status < 500 || status == 503 ? .nothingDone : .unknown
    }
}

/// An answer of an error status is thrown as a ``CaptureError`` with the API's error object,
/// so that each call's result is its success or an error with a code. A redirect is one too:
/// the API never redirects, and following it would send the key elsewhere.
struct ErrorAnswers: ClientMiddleware {
    /// More than any error body the API writes.
    static let largestBody = 1 << 16

    struct Body: Decodable {
        struct Detail: Decodable {
            let type: String
            let code: String
            let message: String
            let param: String?
        }
        let error: Detail
    }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        let status = response.status.code
        guard status >= 300 else { return (response, responseBody) }
        let key = request.headerFields[IdempotencyKeys.header]
        let requestID = response.headerFields[HTTPField.Name("Request-Id")!]
        if status < 400 {
            throw CaptureError(
                status: status,
                code: "redirect",
                message:
                    "the server at \(baseURL.absoluteString) answered \(status), a redirect; the API never redirects, so it was not followed and the key went nowhere else: check the server's URL",
                requestID: requestID,
                outcome: .nothingDone
            )
        }
        var bytes = Data()
        if let responseBody { bytes = try await Data(collecting: responseBody, upTo: Self.largestBody) }
        guard let answer = try? JSONDecoder().decode(Body.self, from: bytes) else {
            throw CaptureError(
                status: status,
                code: "unexpected_answer",
                message: "the server at \(baseURL.absoluteString) answered \(status) without the API's JSON error (is it the API?)",
                requestID: requestID,
                idempotencyKey: key,
                outcome: .unknown
            )
        }
        throw CaptureError(
            status: status,
            type: answer.error.type,
            code: answer.error.code,
            message: answer.error.message,
            param: answer.error.param,
            requestID: requestID,
            retryAfter: response.retryAfterSeconds,
            idempotencyKey: key,
            outcome: CaptureError.outcome(status: status, code: answer.error.code)
        )
    }
}

extension HTTPResponse {
    /// The `Retry-After` header's seconds, when it gives them.
    var retryAfterSeconds: Int? { headerFields[.retryAfter].flatMap { Int($0) } }
}
