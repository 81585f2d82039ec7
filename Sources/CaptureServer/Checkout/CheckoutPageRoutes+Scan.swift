import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OCRBridge
import Payments
import Tokenizer

/// The hosted page's card photo: read by the server's scanner to fill the form in.
extension CheckoutPageRoutes {
    /// What a photo gave, for the script to put in the form: the number grouped as printed
    /// and the expiry as MM/YY, each only when the scanner read it sure enough to offer; a whole
    /// number that fails the check digit (an issuer may print one) as read, for the buyer to
    /// correct, with a message that says so.
    struct Prefill: Encodable {
        let number: String?
        let expiry: String?
        let name: String?
        let message: String
    }

    /// The header the script sends the form's token in.
    static let formTokenHeader = HTTPField.Name("X-Capture-Form-Token")!
    /// Sent with the first frame after the page's camera starts: the browser's earlier reading
    /// (and a card it accepted) is dropped, so the card shown now is the one read.
    static let cameraStartHeader = HTTPField.Name("X-Capture-Camera-Start")!

    /// What a page's picture (a photo, or a camera frame) needs before it is read: an open
    /// session, the page's token with its cookie, an image type and a scanner. Throws the
    /// API error for the first that is missing; `again` says what the buyer should retry.
    func pagePicture(_ request: Request, id: String, again: String) async throws -> (CheckoutSessionRecord, ScanRoutes.Scanning) {
        let session = try await APIError.mapping { try await payments.checkoutPage(id).session }
        guard session.status == CheckoutSessionRecord.open else {
            throw APIError(.conflict, .invalidRequest, code: "checkout_session_not_open", message: "this payment is \(session.status)")
        }
        guard formTokenIsValid(request.headers[Self.formTokenHeader], sessionID: id, request: request) else {
            throw APIError(.forbidden, .invalidRequest, code: "invalid_form_token", message: "reload the page and \(again)")
        }
        try ScanRoutes.requireImageType(request)
        guard let scanning else {
            throw APIError(.serviceUnavailable, .api, code: "scanner_unavailable", message: "pictures cannot be read here; type the card in")
        }
        _ = try scanning.scanner
        return (session, scanning)
    }

    @Sendable func scan(_ request: Request, context: APIContext) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        let (_, scanning) = try await pagePicture(request, id: id, again: "try the photo again")
        let limit = context.maxUploadSize
        let address = client(request, context)
        try scanning.admitPagePhoto(session: id, address: address)
        let bytes = try await scanning.receiving(address: address) {
            Array(try await APIBody.collect(request, limit: limit, tooLarge: ScanRoutes.tooLarge(limit)).readableBytesView)
        }
        let cancellation = await context.clientGone()
        let result = try await scanning.holdingPagePlace(session: id, address: address) {
            let start = ContinuousClock.now
            do {
                let result = try await scanning.scan(bytes, forPage: true, cancellation: cancellation)
                metrics.scan(outcome: result.status.rawValue, source: "page", duration: .now - start)
                return result
            } catch let error as OCRError {
                metrics.scan(outcome: error.code.rawValue, source: "page", duration: .now - start)
                throw ScanRoutes.apiError(error)
            }
        }
        let pan = result.status == .found ? result.pan : nil
        // Only digits read whole that fail the check are offered to correct: a valid number the
        // scan was not sure of would be paid with unchanged.
        let unverified = result.status == .unverified && result.unverified?.reason == .checkDigit ? result.unverified : nil
        let number = pan?.revealedGrouped ?? unverified?.revealedGrouped
        let expiry = result.expiry?.formatted
        let message: String
        if result.status == .specimen {
            message = "The photo shows a sample card, not a payment card: photograph the card you will pay with, or type it in."
        } else if unverified != nil {
            message = "Check every digit of the number read from your photo: as read, it fails the card number's check."
        } else if pan == nil {
            message = "No card number could be read from the photo; type it in."
        } else if let passed = Self.passedExpiry(result.expiry, today: CardClock.system.today(), said: "The photo's card shows the expiry") {
            message = passed
        } else {
            message = "Check the number\(expiry == nil ? "" : " and expiry") read from your photo, then add the security code."
        }
        var headers = Self.securityHeaders
        headers[.contentType] = "application/json"
        let body = try APIJSON.encoder.encode(Prefill(number: number, expiry: expiry, name: pan == nil ? nil : result.holder, message: message))
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
