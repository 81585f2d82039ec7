import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OCRBridge
import Payments
import Tokenizer

/// The hosted page's live camera: `POST /pay/{id}/frames`, one frame (JPEG, about 1000 pixels
/// wide) at a time with the form's token. The server reads each frame (by the scanner's first
/// pass, bounded in time; after a frame the first pass read no number on, by the whole scan
/// within a budget: ``CardScanner/forCameraFrame(afterFirstPassMiss:)``) and votes
/// (``CameraScans``); once frames agree, the card is recorded in the vault as a scan bound to
/// the session, and the page gets what a buyer checks (brand, last four digits, expiry) and a
/// reference the form pays with. The number never goes to the page.
extension CheckoutPageRoutes {
    /// What the page is told after a frame.
    struct FrameAnswer: Encodable {
        /// `reading` or `accepted`.
        let status: String
        let frames: Int
        /// Whether this frame read a number (the frames must still agree on it).
        let numberRead: Bool
        let card: CameraCard?
        let message: String

        enum CodingKeys: String, CodingKey {
            case status, frames, card, message
            case numberRead = "number_read"
        }
    }

    /// The accepted card as the page shows it; `scan` is what the form sends to pay with it.
    struct CameraCard: Encodable {
        let brand: String
        let brandName: String
        let last4: String
        let masked: String
        let expiry: String?
        let cvcLabel: String
        let cvcLength: Int
        let scan: String

        init(_ accepted: CameraScans.Accepted) {
            brand = accepted.brand.id
            brandName = accepted.brand.displayName
            last4 = accepted.last4
            masked = "•••• " + accepted.last4
            expiry = accepted.expiry?.formatted
            cvcLabel = "\(accepted.brand.cvcName) (\(accepted.brand.cvcLength) digits)"
            cvcLength = accepted.brand.cvcLength
            scan = accepted.reference
        }

        enum CodingKeys: String, CodingKey {
            case brand, last4, masked, expiry, scan
            case brandName = "brand_name"
            case cvcLabel = "cvc_label"
            case cvcLength = "cvc_length"
        }
    }

    @Sendable func frame(_ request: Request, context: APIContext) async throws -> Response {
        let id = context.parameters.get("id") ?? ""
        let (session, scanning) = try await pagePicture(request, id: id, again: "scan the card again")
        // The frame is read whole before the session's camera is taken: a frame that stalls
        // on its way (another browser's, or a bad network's) holds only an upload slot of its
        // own address, not the buyer's camera or the pages' share.
        let address = client(request, context)
        // The reading is this browser's: its cookie is checked with the form token already.
        guard let browser = browserNonce(request) else {
            throw APIError(.forbidden, .invalidRequest, code: "invalid_form_token", message: "reload the page and scan the card again")
        }
        let reading = CameraScans.reading(session: id, browser: browser)
        try scanning.admitFrame(session: id, address: address)
        let limit = camera.limits.frame.maxBytes
        let bytes = try await scanning.receiving(address: address) {
            let tooLarge = APIError(
                .contentTooLarge,
                .invalidRequest,
                code: "image_too_large",
                message: "a frame is at most \(limit / 1024) KiB; send about 1000 pixels wide"
            )
            return Array(try await APIBody.collect(request, limit: limit, tooLarge: tooLarge).readableBytesView)
        }
        if let start = request.headers[Self.cameraStartHeader] {
            guard start == "1" else {
                throw APIError(
                    .badRequest,
                    .invalidRequest,
                    code: "parameter_invalid",
                    message: "X-Capture-Camera-Start is \"1\" on the first frame after the camera starts, and absent otherwise",
                    param: "X-Capture-Camera-Start"
                )
            }
            camera.forget(reading)
        }
        switch camera.admit(reading) {
        case .success(let accepted?):
            return try answer(accepted)
        case .failure(.over(let frames)):
            throw APIError(
                .conflict,
                .invalidRequest,
                code: "camera_scan_over",
                message: "no card could be read in \(frames) frames; type the card in"
            )
        case .failure(.busy):
            throw APIError.rateLimited("a frame of this page is being read already; send the next when it is answered", retryAfter: 1)
        case .success(nil):
            break
        }
        let inFull = camera.readsInFull(reading)
        let result: ScanResult?
        let cancellation = await context.clientGone()
        do {
            result = try await scanning.holdingFramePlace(session: id) {
                do {
                    let read = try await scanning.scanFrame(bytes, limits: camera.limits.frame, inFull: inFull, cancellation: cancellation)
                    metrics.cameraFrame(outcome: read.status.rawValue)
                    return read
                } catch let error as OCRError {
                    metrics.cameraFrame(outcome: error.code.rawValue)
                    // A frame the camera spoiled is no reading, not an error: the next one counts.
                    guard error.code == .imageUnreadable else { throw ScanRoutes.apiError(error) }
                    return nil
                }
            }
        } catch {
            camera.release(reading)
            throw error
        }
        switch camera.record(reading, result, inFull: inFull) {
        case .reading(let frames, let numberRead):
            let message =
                result?.status == .specimen
                ? "This is a sample card, not a payment card: show the card you will pay with."
                : numberRead ? "Got it, hold still\u{2026}" : "Hold the card inside the frame, flat and in good light."
            return try answer(FrameAnswer(status: "reading", frames: frames, numberRead: numberRead, card: nil, message: message))
        case .agreed(let agreed, let frames, let after):
            let scan = try await APIError.mapping {
                try await payments.vault.recordScan(
                    for: session.merchantID,
                    result: ScanResult(status: .found, pan: agreed.pan, expiry: agreed.expiry, confidence: 1, milliseconds: 0, holder: agreed.holder),
                    checkoutSession: id
                )
            }
            let accepted = CameraScans.Accepted(
                reference: payments.pageScanReference(sessionID: id, scanID: scan.id, nonce: browser),
                brand: agreed.pan.brand,
                last4: agreed.pan.last4,
                expiry: agreed.expiry,
                frames: frames
            )
            camera.accept(reading, accepted)
            metrics.cameraAccepted(after: after)
            return try answer(accepted)
        }
    }

    /// The answer for a card the frames agreed on, the first time and every time after.
    private func answer(_ accepted: CameraScans.Accepted) throws -> Response {
        try answer(
            FrameAnswer(
                status: "accepted",
                frames: accepted.frames,
                numberRead: true,
                card: CameraCard(accepted),
                message: Self.acceptedMessage(expiry: accepted.expiry, today: CardClock.system.today())
            )
        )
    }

    /// What the page says of a card the camera read: an expiry in the past is said at once
    /// (the field holds it, to correct a misread), not first at Pay.
    static func acceptedMessage(expiry: Expiry?, today: CalendarDate) -> String {
        passedExpiry(expiry, today: today, said: "The camera read the expiry")
            ?? "Check the card read by the camera, then add the security code."
    }

    /// "`said` MM/YY, which has passed: …" for an expiry read off a card that is before
    /// `today`; nil for one still good, or none.
    static func passedExpiry(_ expiry: Expiry?, today: CalendarDate, said: String) -> String? {
        guard let expiry, (try? expiry.validate(on: today)) == nil else { return nil }
        return "\(said) \(expiry.formatted), which has passed: correct it if it was misread, or use a card that is still valid."
    }

    private func answer(_ body: FrameAnswer) throws -> Response {
        var headers = Self.securityHeaders
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try APIJSON.encoder.encode(body))))
    }
}
