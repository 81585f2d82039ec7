import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOHTTP1
import Payments
import Tokenizer

/// Logs one structured line per request (method, route template, path, status, time, merchant,
/// request id),
/// counts it in ``APIMetrics``,
/// and turns every error into the API's JSON error object: the vault's and the card's with
/// their own statuses, Hummingbird's (bad JSON, body too large) rewritten, anything else a
/// bare 500 that says only the request id, with the error logged at error level.
///
/// Paths hold object ids, never card data; bodies are never logged.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let metrics: APIMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            // The request's waits for the database together stay within the store's bound.
            response = try await StoreWaitBudget.$current.withValue(StoreWaitBudget()) { try await next(request, context) }
        } catch {
            let apiError = Self.apiError(for: error, context: context)
            response = try apiError.response(from: request, context: context)
            metrics.apiError(status: apiError.status.code, code: apiError.code)
            if apiError.status.code >= 500 {
                var metadata: Logger.Metadata = [
                    "request_id": .string(context.requestID),
                    "error_type": .string(String(describing: type(of: error))),
                    "code": .string(apiError.code),
                    "error_message": .string(apiError.message),
                ]
                if let cause = apiError.cause { metadata["cause"] = .string(PAN.maskingDigitRuns(in: cause)) }
                context.logger.error("request failed", metadata: metadata)
            }
        }
        response.headers[Self.requestIDHeader] = context.requestID
        let elapsed = ContinuousClock.now - start
        metrics.request(method: request.method.rawValue, route: context.endpointPath ?? "NotFound", status: response.status.code, duration: elapsed)
        context.logger.info(
            "request",
            metadata: [
                "method": .string(request.method.rawValue),
                "route": .string(context.endpointPath ?? "-"),
                "path": .string(Self.loggedPath(request.uri.path)),
                "status": .stringConvertible(response.status.code),
                "duration_ms": .stringConvertible(LogNumber(Self.milliseconds(elapsed))),
                "merchant": .string(context.notes.merchantID ?? "-"),
                "request_id": .string(context.requestID),
            ]
        )
        return response
    }

    /// A request's path as the log shows it: percent-decoded (where it decodes to UTF-8), so
    /// that a number sent as `%34%32…` is masked like one sent plainly, its card-number-like
    /// digit runs masked (``PAN/maskingDigitRuns(in:)``, which reads every script's digits),
    /// control characters shown as `?`.
    static func loggedPath(_ path: String) -> String {
        let decoded = path.contains("%") ? (path.removingPercentEncoding ?? path) : path
        let shown =
            decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            ? String(String.UnicodeScalarView(decoded.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
            : decoded
        return PAN.maskingDigitRuns(in: shown)
    }

    /// "12.34": milliseconds with two decimals, without `String(format:)` (a C format parse
    /// per request).
    static func milliseconds(_ duration: Duration) -> String {
        let hundredths = max(0, duration.nanoseconds / 10_000)
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    static let requestIDHeader = HTTPField.Name("Request-Id")!

    static func apiError(for error: any Error, context: Context) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as HTTPError:
            switch error.status {
            case .contentTooLarge:
                return APIError(.contentTooLarge, .invalidRequest, code: "body_too_large", message: "the request body is too large")
            case .notFound:
                return APIError(.notFound, .invalidRequest, code: "route_not_found", message: "no such route; see GET /openapi.json")
            case .methodNotAllowed:
                return APIError(.methodNotAllowed, .invalidRequest, code: "method_not_allowed", message: "this route does not take that method")
            case .badRequest:
                return APIError(.badRequest, .invalidRequest, code: "invalid_request", message: "the request could not be read")
            default:
                return APIError(
                    error.status,
                    error.status.code >= 500 ? .api : .invalidRequest,
                    code: "http_error",
                    message: error.status.reasonPhrase
                )
            }
        case let error as HTTPParserError:
            // The client's framing, not our fault: a chunk size that is not hex, a body that
            // breaks off. Told as the client's error, and not logged as ours.
            return APIError(
                .badRequest,
                .invalidRequest,
                code: "invalid_request",
                message: "the request's body could not be read (\(error)); check its Content-Length or chunked encoding"
            )
        default:
            return APIError(
                .internalServerError,
                .api,
                code: "internal_error",
                message: "something went wrong on our side; quote request id \(context.requestID) if it persists"
            )
        }
    }
}
