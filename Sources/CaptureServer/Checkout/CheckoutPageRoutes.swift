import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OCRBridge
import Payments
import Tokenizer

/// The hosted checkout page, `/pay/cs_…`: what a buyer sees and pays on. Server-rendered
/// HTML that works without JavaScript; every answer is HTML (never the API's JSON), and the
/// card number appears in no address, redirect or log line.
///
/// - `GET /pay/{id}`: the amount and the form (or how the session ended).
/// - `POST /pay/{id}`: the form (`number`, `expiry`, `cvc`, `name`, `csrf`): each refused
///   field says why in the validator's words; a decline keeps the session open for another
///   card; a payment comes back to the page (303 to `/pay/{id}?sent=1`), which says it is paid
///   and sends the buyer on to the return URL (a refresh, with a link; a later visit shows
///   the link only).
/// - `POST /pay/{id}/cancel`: ends the session; the page then sends the buyer to the cancel URL.
/// - `POST /pay/{id}/scan`: the page's script sends a card photo (JPEG or PNG) with the form's token;
///   the answer is what the scanner read, for the buyer to check in the form. Nothing is kept.
/// - `POST /pay/{id}/frames`: the page's camera, a frame at a time, until frames agree on the
///   card (``frame(_:context:)``); the form then pays with `scan`, a reference bound to the
///   session, instead of a typed number.
struct CheckoutPageRoutes {
    let payments: Payments
    /// The server's scanner, shared with `/v1/scans` (and its limit); nil without one.
    let scanning: ScanRoutes.Scanning?
    /// Whether the page is served over https (`--public-url https://…`): the form's cookie
    /// is then sent over https only.
    let secureCookies: Bool
    /// Payment attempts a client address may make a minute across every session's page (the
    /// token limit's buckets: `serve --token-rate-limit`); nil for none. A session takes
    /// ``Payments/checkoutAttemptLimit`` tries at most, but card testing spreads over many.
    let limiter: RateLimiter?
    /// Whose `X-Forwarded-For` names the client the limits count by.
    let trustedProxies: TrustedProxies
    /// Counts the camera's frames and the cards it accepted.
    let metrics: APIMetrics
    let pages = CheckoutPages.shared
    /// The camera readings in progress, by session.
    let camera = CameraScans()

    /// The cookie that ties a form's anti-forgery token to one browser.
    static let nonceCookie = "capture_pay"
    static let sentCookie = "capture_sent"
    /// The largest form accepted: far above four fields and a token.
    static let formLimit = 16 * 1024

    func add(to router: Router<APIContext>) {
        router.get("pay/assets/checkout.css") { _, _ in asset(pages.styleSheet, type: "text/css; charset=utf-8") }
        router.get("pay/assets/checkout.js") { _, _ in asset(pages.script, type: "text/javascript; charset=utf-8") }
        router.get("pay/:id", use: show)
        router.post("pay/:id", use: pay)
        router.post("pay/:id/cancel", use: cancel)
        router.post("pay/:id/scan", use: scan)
        router.post("pay/:id/frames", use: frame)
    }

    /// What the form posts. Every field is optional here: a missing one is refused by the
    /// validator with its own message.
    struct Submission: Decodable {
        var number: String?
        var expiry: String?
        var cvc: String?
        var name: String?
        var csrf: String?
        /// A scan the page's camera made for this session (``Payments/pageScanReference(sessionID:scanID:)``),
        /// in place of `number`.
        var scan: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case number, expiry, cvc, name, csrf, scan
        }
    }

    @Sendable func show(_ request: Request, context: APIContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        do {
            let page = try await payments.checkoutPage(id)
            // The page loaded anew: this browser's camera starts again (a card it read before
            // does not come back by itself).
            if let browser = browserNonce(request) { camera.forget(CameraScans.reading(session: id, browser: browser)) }
            // Back from the page's own form (?sent=1), in the browser whose payment or cancel
            // ended the session (its one-time mark): the buyer is sent on, once.
            let marked = request.cookies[sentCookieName]?.value == id
            let sent = request.uri.queryParameters["sent"] != nil && marked
            var response = render(
                page.session,
                merchant: page.merchantName,
                transaction: page.transaction,
                status: .ok,
                request: request,
                forward: sent
            )
            if marked, let spent = sentCookie(for: id, maxAge: 0) { response.setCookie(spent) }
            return response
        } catch {
            return failure(error, id: id, context: context)
        }
    }

    @Sendable func pay(_ request: Request, context: APIContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        // Counted before anything is read: a refused card costs as much as a paid one.
        if let limiter, let wait = limiter.take("page " + client(request, context)) {
            var response = message(
                .tooManyRequests,
                "Too many payment attempts from your network in a short time. Nothing was charged by this one; wait \(wait) seconds and try again."
            )
            response.headers[.retryAfter] = "\(wait)"
            return response
        }
        do {
            let page = try await payments.checkoutPage(id)
            let session = page.session
            guard session.status == CheckoutSessionRecord.open else {
                return render(session, merchant: page.merchantName, transaction: page.transaction, status: .conflict, request: request)
            }
            /// The form again, as typed, with what stopped it.
            let again = { (status: HTTPResponse.Status, form: CheckoutPages.Form, notice: CheckoutPages.Notice?) in
                render(session, merchant: page.merchantName, transaction: nil, status: status, request: request, form: form, notice: notice)
            }
            let read: Submission?
            do {
                read = try await readForm(request)
            } catch let unknown as UnknownFormField {
                return again(.badRequest, CheckoutPages.Form(), Self.unknownField(unknown.name))
            }
            guard let submission = read else {
                return again(.badRequest, CheckoutPages.Form(), Self.unreadable)
            }
            var form = typed(submission)
            guard formTokenIsValid(submission.csrf, sessionID: id, request: request) else {
                // Not sent from this page (or too late): the card is not written back into
                // a page a forged post asked for; only the name is kept.
                return again(.forbidden, CheckoutPages.Form(name: form.name), Self.staleForm)
            }
            var checked = submission
            var scanID: String?
            if let reference = submission.scan, !reference.isEmpty {
                // The camera's card, read by this browser's camera for this session: its number
                // from the vault, never from the page. Whatever this attempt comes to, the
                // camera starts again (a card refused here never comes back by itself).
                let browser = browserNonce(request) ?? ""
                camera.forget(CameraScans.reading(session: id, browser: browser))
                guard let found = payments.pageScanID(reference, sessionID: id, nonce: browser),
                    let scanned = try? await payments.vault.scannedCard(for: session.merchantID, scan: found, checkoutSession: id)
                else {
                    form.numberError = "the camera's reading has expired or been used; scan the card again or type its number"
                    return again(.unprocessableContent, form, nil)
                }
                scanID = found
                checked.number = scanned.number
                checked.name = (submission.name ?? "").isEmpty ? scanned.holder : submission.name
            }
            guard let card = check(checked, session: session, into: &form) else {
                // The camera's number is not written into the page: the buyer scans again or types it.
                if scanID != nil {
                    form.number = ""
                    form.numberError = form.numberError ?? "scan the card again, or type its number"
                }
                return again(.unprocessableContent, form, nil)
            }
            switch try await payments.payCheckoutSession(id, card: card, scan: scanID) {
            case .paid:
                // To this page, which says the payment is done and sends the buyer on: a
                // browser may refuse a form's redirect to the merchant's site (its address, or
                // one it redirects to, outside the page's form-action policy), and a buyer
                // left on "Paying…" after a payment may pay again.
                return ended(id)
            case .pending(let held, _):
                // The card went to the processor and its outcome could not be written: the
                // buyer must neither think it failed nor pay again.
                let notice = CheckoutPages.Notice(
                    kind: "info",
                    text: "Your payment was sent, but its outcome could not be confirmed yet. "
                        + "Do not pay again: reload this page in a minute to see whether it went through."
                )
                return render(
                    held,
                    merchant: page.merchantName,
                    transaction: nil,
                    status: HTTPResponse.Status(code: IdempotencyKeys.unfinishedStatus),
                    request: request,
                    form: CheckoutPages.Form(name: form.name),
                    notice: notice
                )
            case .refused(let open, let transaction):
                // Another card is what the buyer needs: its number and expiry start empty.
                let left = Payments.checkoutAttemptLimit - open.attempts
                let said =
                    transaction.status == "declined"
                    ? "Your card was declined; try another card."
                    : "The payment could not be completed; try again or use another card."
                let notice = CheckoutPages.Notice(kind: "error", text: said + (left > 0 ? " \(Self.tries(left)) left." : ""))
                return render(
                    open,
                    merchant: page.merchantName,
                    transaction: nil,
                    status: .paymentRequired,
                    request: request,
                    form: CheckoutPages.Form(name: form.name),
                    notice: notice
                )
            }
        } catch {
            return failure(error, id: id, context: context)
        }
    }

    @Sendable func cancel(_ request: Request, context: APIContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        do {
            let page = try await payments.checkoutPage(id)
            guard page.session.status == CheckoutSessionRecord.open else {
                return render(page.session, merchant: page.merchantName, transaction: page.transaction, status: .conflict, request: request)
            }
            let submission: Submission?
            do {
                submission = try await readForm(request)
            } catch let unknown as UnknownFormField {
                let notice = Self.unknownField(unknown.name)
                return render(page.session, merchant: page.merchantName, transaction: nil, status: .badRequest, request: request, notice: notice)
            }
            guard formTokenIsValid(submission?.csrf, sessionID: id, request: request) else {
                return render(
                    page.session,
                    merchant: page.merchantName,
                    transaction: nil,
                    status: .forbidden,
                    request: request,
                    notice: Self.staleForm
                )
            }
            _ = try await payments.cancelCheckoutPage(id)
            return ended(id)
        } catch {
            return failure(error, id: id, context: context)
        }
    }

    /// The client's address as the rate limits count it.
    func client(_ request: Request, _ context: APIContext) -> String {
        trustedProxies.rateKey(of: request, context)
    }

    // MARK: - The form

    /// The posted form, or nil when it cannot be read as one.
    ///
    /// - Throws: ``UnknownFormField`` for a field the page's forms do not have (a form made
    ///   elsewhere, or a page of another version): refused, not ignored.
    func readForm(_ request: Request) async throws -> Submission? {
        let tooLarge = APIError(.contentTooLarge, .invalidRequest, code: "body_too_large", message: "the form is over 16 KiB")
        let text = String(buffer: try await APIBody.collect(request, limit: Self.formLimit, tooLarge: tooLarge))
        for pair in text.split(separator: "&") {
            let raw = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let name = raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(raw)
            if !Self.formFields.contains(name) { throw UnknownFormField(name: KnownParameters.shown(name)) }
        }
        return try? URLEncodedFormDecoder().decode(Submission.self, from: text)
    }

    /// The fields of the page's forms (the payment form's; the cancel form sends `csrf`).
    static let formFields = KnownParameters(Submission.CodingKeys.self)

    /// A posted form field the page does not have.
    struct UnknownFormField: Error {
        let name: String
    }

    /// What the buyer typed, to show again (never the security code).
    func typed(_ submission: Submission) -> CheckoutPages.Form {
        var form = CheckoutPages.Form()
        form.number = String((submission.number ?? "").prefix(23))
        form.expiry = String((submission.expiry ?? "").prefix(9))
        form.name = String((submission.name ?? "").prefix(100))
        return form
    }

    /// The card, when every field holds; otherwise nil, with each field's error in `form`.
    func check(_ submission: Submission, session: CheckoutSessionRecord, into form: inout CheckoutPages.Form) -> CardInput? {
        let number = submission.number ?? ""
        let result = payments.cardValidator.validate(number: number, expiry: submission.expiry ?? "", cvc: submission.cvc ?? "")
        form.numberError = Self.refusal(result.number) ?? Payments.brandRefusal(number, session: session)?.message
        form.expiryError = Self.refusal(result.expiry)
        form.cvcError = Self.refusal(result.cvc)
        let name = (submission.name ?? "").trimmingCharacters(in: .whitespaces)
        if name.count > 100 || name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            form.nameError = "the name on the card is at most 100 letters, spaces and punctuation"
        }
        guard form.numberError == nil, form.expiryError == nil, form.cvcError == nil, form.nameError == nil,
            let pan = try? result.number?.get(), let expiry = try? result.expiry?.get(), let cvc = try? result.cvc?.get()
        else { return nil }
        return CardInput(number: pan.revealed, expMonth: expiry.month, expYear: expiry.year, cvc: cvc.revealed, holder: name.isEmpty ? nil : name)
    }

    /// A refused field's message.
    static func refusal<Value>(_ result: Result<Value, CardValidationError>?) -> String? {
        guard case .failure(let error)? = result else { return nil }
        return error.message
    }

    /// The nonce of the page cookie the browser sent, when this vault issued it.
    func browserNonce(_ request: Request) -> String? {
        request.cookies[cookieName].flatMap { payments.pageCookieNonce($0.value) }
    }

    func formTokenIsValid(_ token: String?, sessionID: String, request: Request) -> Bool {
        guard let token, let value = request.cookies[cookieName]?.value, let nonce = payments.pageCookieNonce(value) else { return false }
        return payments.pageFormTokenIsValid(token, sessionID: sessionID, nonce: nonce)
    }
}
