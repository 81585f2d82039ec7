import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OCRBridge
import Tokenizer

/// The hosted checkout page, `/pay/cs_…`: what a buyer sees and pays on. Server-rendered
/// HTML that works without JavaScript; every answer is HTML (never the API's JSON), and the
/// card number appears in no address, redirect or log line.
///
/// - `GET /pay/{id}`: the amount and the form (or how the session ended).
/// - `POST /pay/{id}`: the form (`number`, `expiry`, `cvc`, `name`, `csrf`): each refused
///   field says why in the validator's words; a decline keeps the session open for another
///   card; a payment sends the buyer to the return URL (303).
/// - `POST /pay/{id}/cancel`: ends the session and sends the buyer to the cancel URL.
/// - `POST /pay/{id}/scan`: the page's script sends a card photo (PNG) with the form's token;
///   the answer is what the scanner read, for the buyer to check in the form. Nothing is kept.
struct CheckoutPageRoutes {
    let payments: Payments
    /// The server's scanner, shared with `/v1/scans` (and its limit); nil without one.
    let scanning: ScanRoutes.Scanning?
    /// Whether the page is served over https (`--public-url https://…`): the form's cookie
    /// is then sent over https only.
    let secureCookies: Bool
    let pages = CheckoutPages.shared

    /// The cookie that ties a form's anti-forgery token to one browser.
    static let nonceCookie = "capture_pay"
    /// The largest form accepted: far above four fields and a token.
    static let formLimit = 16 * 1024

    func add(to router: Router<APIContext>) {
        router.get("pay/assets/checkout.css") { _, _ in asset(pages.styleSheet, type: "text/css; charset=utf-8") }
        router.get("pay/assets/checkout.js") { _, _ in asset(pages.script, type: "text/javascript; charset=utf-8") }
        router.get("pay/:id", use: show)
        router.post("pay/:id", use: pay)
        router.post("pay/:id/cancel", use: cancel)
        router.post("pay/:id/scan", use: scan)
    }

    /// What the form posts. Every field is optional here: a missing one is refused by the
    /// validator with its own message.
    struct Submission: Decodable {
        var number: String?
        var expiry: String?
        var cvc: String?
        var name: String?
        var csrf: String?
    }

    @Sendable func show(_ request: Request, context: APIContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        do {
            let page = try await payments.checkoutPage(id)
            return render(page.session, merchant: page.merchantName, transaction: page.transaction, status: .ok, request: request)
        } catch {
            return failure(error, id: id, context: context)
        }
    }

    @Sendable func pay(_ request: Request, context: APIContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        do {
            let page = try await payments.checkoutPage(id)
            let session = page.session
            let render = { (status: HTTPResponse.Status, form: CheckoutPages.Form, notice: CheckoutPages.Notice?) in
                self.render(session, merchant: page.merchantName, transaction: nil, status: status, request: request, form: form, notice: notice)
            }
            guard session.status == CheckoutSessionRecord.open else {
                return self.render(session, merchant: page.merchantName, transaction: page.transaction, status: .conflict, request: request)
            }
            guard let submission = try await readForm(request) else {
                return render(.badRequest, CheckoutPages.Form(), Self.unreadable)
            }
            var form = typed(submission)
            guard formTokenIsValid(submission.csrf, sessionID: id, request: request) else {
                return render(.forbidden, form, Self.staleForm)
            }
            guard let card = check(submission, session: session, into: &form) else {
                return render(.unprocessableContent, form, nil)
            }
            switch try await payments.payCheckoutSession(id, card: card) {
            case .paid(let paid, let transaction):
                return redirect(to: CheckoutReturn.url(for: paid, transaction: transaction))
            case .refused(let open, let transaction):
                // Another card is what the buyer needs: its number and expiry start empty.
                let left = Payments.checkoutAttemptLimit - open.attempts
                let said =
                    transaction.status == "declined"
                    ? "Your card was declined; try another card."
                    : "The payment could not be completed; try again or use another card."
                let notice = CheckoutPages.Notice(kind: "error", text: said + (left > 0 ? " \(Self.tries(left)) left." : ""))
                return self.render(
                    open,
                    merchant: page.merchantName,
                    transaction: nil,
                    status: Self.paymentRequired,
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
            let submission = try await readForm(request)
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
            let canceled = try await payments.cancelCheckoutPage(id)
            return redirect(to: CheckoutReturn.url(for: canceled, transaction: nil))
        } catch {
            return failure(error, id: id, context: context)
        }
    }

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
        guard request.headers[.contentType]?.lowercased().hasPrefix("image/png") == true else {
            throw APIError(.unsupportedMediaType, .invalidRequest, code: "unsupported_media_type", message: "the photo must be a PNG image")
        }
        guard let scanning else {
            throw APIError(.serviceUnavailable, .api, code: "scanner_unavailable", message: "photos cannot be read here; type the card in")
        }
        let limit = context.maxUploadSize
        let result = try await scanning.holdingPlace {
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

    // MARK: - The form

    /// The posted form, or nil when it cannot be read as one.
    private func readForm(_ request: Request) async throws -> Submission? {
        let tooLarge = APIError(.contentTooLarge, .invalidRequest, code: "body_too_large", message: "the form is over 16 KiB")
        let body = try await APIBody.collect(request, limit: Self.formLimit, tooLarge: tooLarge)
        return try? URLEncodedFormDecoder().decode(Submission.self, from: String(buffer: body))
    }

    /// What the buyer typed, to show again (never the security code).
    private func typed(_ submission: Submission) -> CheckoutPages.Form {
        var form = CheckoutPages.Form()
        form.number = String((submission.number ?? "").prefix(23))
        form.expiry = String((submission.expiry ?? "").prefix(9))
        form.name = String((submission.name ?? "").prefix(100))
        return form
    }

    /// The card, when every field holds; otherwise nil, with each field's error in `form`.
    private func check(_ submission: Submission, session: CheckoutSessionRecord, into form: inout CheckoutPages.Form) -> CardInput? {
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
    private static func refusal<Value>(_ result: Result<Value, CardValidationError>?) -> String? {
        guard case .failure(let error)? = result else { return nil }
        return error.message
    }

    private func formTokenIsValid(_ token: String?, sessionID: String, request: Request) -> Bool {
        guard let token, let nonce = request.cookies[Self.nonceCookie]?.value, Self.isNonce(nonce) else { return false }
        return payments.pageFormTokenIsValid(token, sessionID: sessionID, nonce: nonce)
    }

    // MARK: - Answers

    /// The page for a session as it stands: the form while it is open and has attempts left,
    /// else how it ended.
    private func render(
        _ session: CheckoutSessionRecord,
        merchant: String,
        transaction: TransactionRecord?,
        status: HTTPResponse.Status,
        request: Request,
        form: CheckoutPages.Form = CheckoutPages.Form(),
        notice: CheckoutPages.Notice? = nil
    ) -> Response {
        let sent = request.cookies[Self.nonceCookie]?.value
        let nonce = sent.map(Self.isNonce) == true ? sent ?? "" : Self.newNonce()
        let amount = CheckoutPages.money(session.amount, currency: session.currency)
        var view = CheckoutPages.View(
            title: "Pay \(merchant.isEmpty ? amount : merchant)",
            merchant: merchant,
            amount: amount,
            id: session.id,
            csrf: payments.pageFormToken(sessionID: session.id, nonce: nonce),
            summary: CheckoutPages.Summary(description: session.description, amount: amount, tax: tax(of: session)),
            notice: notice,
            form: nil,
            cancel: false,
            ended: nil
        )
        if session.status == CheckoutSessionRecord.open {
            view.cancel = true
            if session.attempts < Payments.checkoutAttemptLimit {
                view.form = shown(form)
            } else {
                view.notice = CheckoutPages.Notice(
                    kind: "error",
                    text: (notice.map { $0.text + " " } ?? "")
                        + "This payment has been tried \(Payments.checkoutAttemptLimit) times, the most it allows. Cancel, and ask \(merchant) for a new link."
                )
            }
        } else {
            view.ended = ended(session, merchant: merchant, transaction: transaction)
        }
        var response = html(status, pages.render(view), session: session)
        if let cookie = try? Cookie.validated(
            name: Self.nonceCookie,
            value: nonce,
            path: "/pay",
            secure: secureCookies,
            httpOnly: true,
            sameSite: .strict
        ) {
            response.setCookie(cookie)
        }
        return response
    }

    /// The form with its messages as sentences, and the brand's name and security code as
    /// far as the number tells them.
    private func shown(_ form: CheckoutPages.Form) -> CheckoutPages.Form {
        var shown = form
        for path in [\CheckoutPages.Form.numberError, \.expiryError, \.cvcError, \.nameError] {
            shown[keyPath: path] = form[keyPath: path].map(Self.sentence)
        }
        if let brand = CardBrand.detectPartial(form.number).brand {
            shown.brand = brand.displayName
            shown.cvcLabel = "\(brand.cvcName) (\(brand.cvcLength) digits)"
            shown.cvcPlaceholder = String(repeating: "•", count: brand.cvcLength)
        }
        return shown
    }

    private func ended(_ session: CheckoutSessionRecord, merchant: String, transaction: TransactionRecord?) -> CheckoutPages.Ended {
        let link = CheckoutReturn.url(for: session, transaction: transaction)
        switch session.status {
        case CheckoutSessionRecord.complete:
            let card = transaction.map { " with the \(Self.brandName($0.brand)) card ending \($0.last4)" } ?? ""
            return CheckoutPages.Ended(heading: "Paid", text: "This payment is complete: it was paid\(card).", link: link)
        case CheckoutSessionRecord.canceled:
            return CheckoutPages.Ended(heading: "Payment canceled", text: "This payment was canceled. Nothing was charged.", link: link)
        default:
            return CheckoutPages.Ended(
                heading: "This payment link has expired",
                text: "Nothing was charged. Ask \(merchant.isEmpty ? "the merchant" : merchant) for a new link.",
                link: link
            )
        }
    }

    /// Errors that are not the buyer's typing: an unknown session is a 404 page; a session
    /// that stopped taking payments while the form was up shows how it ended; anything else
    /// is logged (never with card data: errors do not hold any) and answered 500.
    private func failure(_ error: any Error, id: String, context: APIContext) -> Response {
        if let error = error as? VaultError, error.code == .checkoutSessionNotFound {
            let view = CheckoutPages.View(
                title: "Payment link not found",
                merchant: "",
                amount: "",
                id: "",
                csrf: "",
                notice: nil,
                cancel: false,
                ended: CheckoutPages.Ended(
                    heading: "This payment link is not valid",
                    text: "Check the address, or ask the shop that sent you here for a new link."
                )
            )
            return html(.notFound, pages.render(view), session: nil)
        }
        if let error = error as? APIError, error.status == .contentTooLarge {
            return message(.contentTooLarge, "The form was too large to read. Go back, reload the page and try again.")
        }
        if let error = error as? CardValidationError {
            return message(.unprocessableContent, Self.sentence(error.message) + " Go back and correct it.")
        }
        if let error = error as? VaultError, error.code == .checkoutSessionNotOpen {
            return message(.conflict, Self.sentence(error.message) + ". Reload the page to see where it stands.")
        }
        context.logger.error("checkout page \(id.prefix(40)) failed: \(error)")
        return message(.internalServerError, "Something went wrong on our side; nothing was charged by this attempt. Reload the page and try again.")
    }

    private func message(_ status: HTTPResponse.Status, _ text: String) -> Response {
        let view = CheckoutPages.View(
            title: "Payment",
            merchant: "",
            amount: "",
            id: "",
            csrf: "",
            notice: CheckoutPages.Notice(kind: "error", text: text),
            cancel: false
        )
        return html(status, pages.render(view), session: nil)
    }

    private func tax(of session: CheckoutSessionRecord) -> String? {
        guard let rate = session.taxRate, let amount = CheckoutReturn.tax(in: session) else { return nil }
        return "\(CheckoutPages.money(amount, currency: session.currency)) (\(rate) %)"
    }

    // MARK: - HTTP

    /// Headers every page carries: no caching, no framing, no referrer, and a policy that
    /// lets the page load only its own style sheet and script and post only to itself and to
    /// the session's return and cancel addresses (a browser checks a form's redirect too).
    private func html(_ status: HTTPResponse.Status, _ body: String, session: CheckoutSessionRecord?) -> Response {
        var headers = Self.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        let targets = [session?.returnURL, session?.cancelURL].compactMap { $0.flatMap(Self.origin) }
        let formAction = (["'self'"] + Set(targets).sorted()).joined(separator: " ")
        headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            + "form-action \(formAction); frame-ancestors 'none'; base-uri 'none'"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    private func redirect(to location: String) -> Response {
        var headers = Self.securityHeaders
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }

    private func asset(_ body: ByteBuffer, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "public, max-age=3600"
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }

    private static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    private static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    private static let paymentRequired = HTTPResponse.Status(code: 402, reasonPhrase: "Payment Required")

    private static let securityHeaders: HTTPFields = {
        var headers = HTTPFields()
        headers[.cacheControl] = "no-store"
        headers[Self.xFrameOptions] = "DENY"
        headers[Self.referrerPolicy] = "no-referrer"
        headers[.xContentTypeOptions] = "nosniff"
        return headers
    }()

    /// `https://shop.example:8443` of a URL, for the policy; nil when its host is anything
    /// but plain letters, digits, dots, dashes and IPv6 brackets.
    static func origin(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.percentEncodedHost, !host.isEmpty
        else { return nil }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
        guard host.allSatisfy(allowed.contains) else { return nil }
        return scheme + "://" + host + (components.port.map { ":\($0)" } ?? "")
    }

    // MARK: - Words

    static let unreadable = CheckoutPages.Notice(kind: "error", text: "The form could not be read. Fill it in again and press Pay.")
    static let staleForm = CheckoutPages.Notice(
        kind: "error",
        text: "This form had expired or was not sent from this page, so nothing was charged. Check the details and try again."
    )

    static func tries(_ count: Int) -> String { count == 1 ? "1 try" : "\(count) tries" }

    /// A validator message as a sentence: capital first letter, full stop.
    static func sentence(_ message: String) -> String {
        guard let first = message.first else { return message }
        let text = first.uppercased() + message.dropFirst()
        return text.hasSuffix(".") ? text : text + "."
    }

    static func brandName(_ id: String) -> String {
        CardBrand.all.first(where: { $0.id == id })?.displayName ?? id
    }

    // MARK: - The form's cookie

    static func newNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }

    static func isNonce(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
