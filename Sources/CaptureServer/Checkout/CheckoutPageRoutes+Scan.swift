import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OCRBridge
import Tokenizer

/// The hosted page's card photo: read by the server's scanner to fill the form in.
extension CheckoutPageRoutes {
    /// What a photo gave, for the script to put in the form: the number grouped as printed
    /// and the expiry as MM/YY, each only when the scanner read it sure enough to offer.
    struct Prefill: Encodable {
        let number: String?
        let expiry: String?
        let name: String?
        let message: String
    }

    /// The header the script sends the form's token in.
    static let formTokenHeader = HTTPField.Name("X-Capture-Form-Token")!

    @Sendable func scan(_ request: Request, context: APIContext) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        let session = try await APIError.mapping { try await payments.checkoutPage(id).session }
        guard session.status == CheckoutSessionRecord.open else {
            throw APIError(.conflict, .invalidRequest, code: "checkout_session_not_open", message: "this payment is \(session.status)")
        }
        guard formTokenIsValid(request.headers[Self.formTokenHeader], sessionID: id, request: request) else {
            throw APIError(.forbidden, .invalidRequest, code: "invalid_form_token", message: "reload the page and try the photo again")
        }
        try ScanRoutes.requireImageType(request)
        guard let scanning else {
            throw APIError(.serviceUnavailable, .api, code: "scanner_unavailable", message: "photos cannot be read here; type the card in")
        }
        let limit = context.maxUploadSize
        let result = try await scanning.holdingPagePlace(session: id, address: client(request, context)) {
            let bytes = Array(try await APIBody.collect(request, limit: limit, tooLarge: ScanRoutes.tooLarge(limit)).readableBytesView)
            do {
                return try await scanning.scan(bytes)
            } catch let error as OCRError {
                throw ScanRoutes.apiError(error)
            }
        }
        let pan = result.status == .found ? result.pan : nil
        let number = pan?.revealedGrouped
        let expiry = result.expiry.map { String(format: "%02d/%02d", $0.month, $0.year % 100) }
        let message =
            pan == nil
            ? "No card number could be read from the photo; type it in."
            : "Check the number\(expiry == nil ? "" : " and expiry") read from your photo, then add the security code."
        var headers = Self.securityHeaders
        headers[.contentType] = "application/json"
        let body = try APIJSON.encoder.encode(Prefill(number: number, expiry: expiry, name: pan == nil ? nil : result.holder, message: message))
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
