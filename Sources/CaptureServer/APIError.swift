import CardCapture
import Foundation
public import Hummingbird
import Payments
import Tokenizer

/// An error as the API answers it: `{"error": {"type", "code", "message", "param"?}}` with
/// its HTTP status. The message says what is wrong and what to do, and never holds card data.
public struct APIError: HTTPResponseError, Sendable {
    /// The error types of the contract.
    public enum Kind: String, Sendable, Codable {
        case invalidRequest = "invalid_request_error"
        case card = "card_error"
        case authentication = "authentication_error"
        case idempotency = "idempotency_error"
        case rateLimit = "rate_limit_error"
        case api = "api_error"
    }

    public let status: HTTPResponse.Status
    public let kind: Kind
    public let code: String
    public let message: String
    public let param: String?
    /// Seconds after which a retry may succeed (`Retry-After`), for 429 and 503.
    public var retryAfter: Int?
    /// The methods a path takes (`Allow`), for 405.
    public var allow: String?
    /// What failed underneath (``VaultError/cause``): in the server's error line, never in the answer.
    public var cause: String?

    public init(_ status: HTTPResponse.Status, _ kind: Kind, code: String, message: String, param: String? = nil) {
        self.status = status
        self.kind = kind
        self.code = code
        // A card number sent where an id belongs is not echoed back.
        self.message = PAN.maskingDigitRuns(in: message)
        self.param = param
    }

    struct Body: Encodable {
        struct Detail: Encodable {
            let type: String
            let code: String
            let message: String
            let param: String?
            /// The request's id, as in its `Request-Id` header and its log line.
            let requestID: String?

            enum CodingKeys: String, CodingKey {
                case type, code, message, param
                case requestID = "request_id"
            }
        }
        let error: Detail
    }

    /// The error object's JSON, with the request's id when there is one.
    func body(requestID: String?) -> [UInt8] {
        let body = Body(error: .init(type: kind.rawValue, code: code, message: message, param: param, requestID: requestID))
        // Strings and an optional string: nothing here can fail to encode.
        return (try? Array(APIJSON.encoder.encode(body))) ?? Array(#"{"error":{"type":"api_error","code":"internal_error"}}"#.utf8)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = HTTPFields()
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if let allow { headers[.allow] = allow }
        return APIJSON.response(status, body(requestID: (context as? APIContext)?.requestID), headers: headers)
    }

    // MARK: - Common errors

    static func missingKey() -> APIError {
        APIError(
            .unauthorized,
            .authentication,
            code: "missing_api_key",
            message: "no API key: send 'Authorization: Bearer sk_…' (or pk_… to create tokens and scans)"
        )
    }

    static func invalidKey() -> APIError {
        APIError(
            .unauthorized,
            .authentication,
            code: "invalid_api_key",
            message: "this API key is not valid; check it, or create keys with `capture-cli keys create`"
        )
    }

    static func secretKeyRequired() -> APIError {
        APIError(
            .forbidden,
            .authentication,
            code: "secret_key_required",
            message: "a publishable key may only create tokens and scans; use your secret key (sk_…) from your server"
        )
    }

    /// 429 `rate_limited`: too many at once; `Retry-After` says when to try again.
    static func rateLimited(_ message: String, retryAfter seconds: Int) -> APIError {
        var error = APIError(.tooManyRequests, .rateLimit, code: "rate_limited", message: message)
        error.retryAfter = seconds
        return error
    }

    /// A card that fails validation: 402 `card_error`, naming the field.
    init(_ error: CardValidationError) {
        let param: String =
            switch error.code {
            case .invalidExpiryMonth, .incompleteExpiry: "exp_month"
            case .invalidExpiryYear: "exp_year"
            case .expiredCard: "exp_year"
            case .invalidCVC: "cvc"
            default: "number"
            }
        // The API takes whole cards: what a form would call incomplete is invalid here.
        let code =
            switch error.code {
            case .incompleteNumber: "invalid_number"
            case .incompleteExpiry: "invalid_expiry_month"
            default: error.code.rawValue
            }
        // 402, as the card was read and refused; 400 stays for requests the document forbids.
        self.init(.paymentRequired, .card, code: code, message: error.message, param: param)
    }

    /// The vault's refusals with the statuses of the contract.
    init(_ error: VaultError) {
        let code = error.code.rawValue
        switch error.code {
        case .tokenNotFound:
            self.init(.notFound, .invalidRequest, code: code, message: error.message, param: "token")
        case .clientNotFound, .paymentMethodNotFound, .transactionNotFound, .checkoutSessionNotFound, .webhookEndpointNotFound,
            .eventNotFound, .webhookDeliveryNotFound:
            self.init(.notFound, .invalidRequest, code: code, message: error.message, param: error.param)
        case .tokenExpired:
            self.init(.gone, .invalidRequest, code: code, message: error.message, param: "token")
        case .tokenAlreadyUsed:
            self.init(.conflict, .invalidRequest, code: code, message: error.message, param: "token")
        case .scanNotFound:
            self.init(.notFound, .invalidRequest, code: code, message: error.message, param: "scan")
        case .scanExpired:
            self.init(.gone, .invalidRequest, code: code, message: error.message, param: "scan")
        case .scanAlreadyUsed:
            self.init(.conflict, .invalidRequest, code: code, message: error.message, param: "scan")
        // 422: a well-formed request whose values cannot be used with the objects it names.
        case .scanWithoutNumber:
            self.init(.unprocessableContent, .invalidRequest, code: code, message: error.message, param: "scan")
        // (An amount within the document's bound may still be over its currency's limit.)
        case .amountMismatch, .refundTooLarge, .amountTooLarge:
            self.init(.unprocessableContent, .invalidRequest, code: code, message: error.message, param: "amount")
        case .currencyMismatch:
            self.init(.unprocessableContent, .invalidRequest, code: code, message: error.message, param: "currency")
        case .invalidAddress:
            self.init(.unprocessableContent, .invalidRequest, code: code, message: error.message, param: error.param)
        case .paymentMethodOfAnotherClient:
            self.init(.unprocessableContent, .invalidRequest, code: code, message: error.message, param: "client")
        // 400: what openapi.json does not allow.
        case .invalidAmount:
            self.init(.badRequest, .invalidRequest, code: code, message: error.message, param: "amount")
        case .invalidCurrency:
            self.init(.badRequest, .invalidRequest, code: code, message: error.message, param: "currency")
        case .invalidRequest:
            self.init(.badRequest, .invalidRequest, code: code, message: error.message, param: error.param)
        case .notRefundable, .checkoutSessionNotOpen, .webhookDeliveryPending, .webhookEndpointLimit:
            self.init(.conflict, .invalidRequest, code: code, message: error.message, param: error.param)
        case .idempotencyKeyInUse:
            self.init(.conflict, .idempotency, code: code, message: error.message)
        case .processorError:
            self.init(.badGateway, .api, code: code, message: error.message)
        case .apiKeyRevoked:
            self.init(.unauthorized, .authentication, code: code, message: error.message)
        case .storageUnavailable, .storageOutcomeUnknown:
            // A load balancer or a client retries after the database came back.
            self.init(.serviceUnavailable, .api, code: code, message: error.message)
            retryAfter = 2
        default:
            self.init(.internalServerError, .api, code: code, message: "the vault could not complete the request; try again later")
        }
        cause = error.cause
    }

    /// Runs `operation`, answering vault and card-validation errors as the API's.
    static func mapping<T>(_ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch let error as VaultError {
            throw APIError(error)
        } catch let error as CardValidationError {
            throw APIError(error)
        }
    }
}

extension HTTPResponse.Status {
    /// 402: a card the vault or the processor refused (HTTPTypes names no such status).
    static let paymentRequired = HTTPResponse.Status(code: 402, reasonPhrase: "Payment Required")
}

/// The JSON coders of the API: snake_case keys as declared, ISO 8601 dates.
enum APIJSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        // ISO 8601 to the second, as `.iso8601` writes it, without a formatter per date; keys in
        // declaration order (sorting them cost a tenth of a token response).
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(StoreDate.iso8601(date))
        }
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// A response carrying JSON bytes, with any further headers.
    static func response(_ status: HTTPResponse.Status, _ bytes: some Sequence<UInt8>, headers extra: HTTPFields = [:]) -> Response {
        var headers = extra
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
