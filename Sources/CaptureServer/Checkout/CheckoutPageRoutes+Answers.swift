import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OCRBridge
import Payments
import Tokenizer

/// What the page answers: the rendered page, redirects, its headers and its words.
extension CheckoutPageRoutes {
    // MARK: - Answers

    /// The page for a session as it stands: the form while it is open and has attempts left,
    /// else how it ended.
    func render(
        _ session: CheckoutSessionRecord,
        merchant: String,
        transaction: TransactionRecord?,
        status: HTTPResponse.Status,
        request: Request,
        form: CheckoutPages.Form = CheckoutPages.Form(),
        notice: CheckoutPages.Notice? = nil,
        forward: Bool = false
    ) -> Response {
        // The browser's cookie when this vault issued it, else a new one.
        let cookie =
            request.cookies[cookieName].flatMap { sent in payments.pageCookieNonce(sent.value).map { (value: sent.value, nonce: $0) } }
            ?? payments.newPageCookie()
        let amount = CheckoutPages.money(session.amount, currency: session.currency)
        var view = CheckoutPages.View(
            title: "Pay \(merchant.isEmpty ? amount : merchant)",
            merchant: merchant,
            amount: amount,
            id: session.id,
            csrf: payments.pageFormToken(sessionID: session.id, nonce: cookie.nonce),
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
                if session.savePaymentMethod {
                    let who = merchant.isEmpty ? "The shop" : merchant
                    view.saving = "\(who) will keep this card, encrypted, to charge it again later; the security code is not kept."
                }
            } else {
                view.notice = CheckoutPages.Notice(
                    kind: "error",
                    text: (notice.map { $0.text + " " } ?? "")
                        + "This payment has been tried \(Payments.checkoutAttemptLimit) times, the most it allows. Cancel, and ask \(merchant) for a new link."
                )
            }
        } else {
            view.ended = ended(session, merchant: merchant, transaction: transaction)
            if !forward { view.ended?.forward = nil }
        }
        // The merchant's return and cancel addresses (an app's scheme among them) are where
        // the page sends the buyer on: the form-action policy names them as well.
        let returns = [session.returnURL] + (session.cancelURL.map { [$0] } ?? [])
        var response = html(status, pages.render(view), returnsTo: returns.compactMap { try? ReturnAddress($0, param: "return_url").policySource })
        // Over https the name's __Host- prefix makes the browser keep it to this host, secure,
        // for the whole site (Path=/); over http (development) it cannot have one.
        if let cookie = try? Cookie.validated(
            name: cookieName,
            value: cookie.value,
            path: secureCookies ? "/" : "/pay",
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
    func shown(_ form: CheckoutPages.Form) -> CheckoutPages.Form {
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

    func ended(_ session: CheckoutSessionRecord, merchant: String, transaction: TransactionRecord?) -> CheckoutPages.Ended {
        let link = CheckoutReturn.url(for: session, transaction: transaction)
        switch session.status {
        case CheckoutSessionRecord.complete:
            let card = transaction.map { " with the \(Self.brandName($0.brand)) card ending \($0.last4)" } ?? ""
            return CheckoutPages.Ended(heading: "Paid", text: "This payment is complete: it was paid\(card).", link: link, forward: link)
        case CheckoutSessionRecord.canceled:
            return CheckoutPages.Ended(
                heading: "Payment canceled",
                text: "This payment was canceled. Nothing was charged.",
                link: link,
                forward: link
            )
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
    func failure(_ error: any Error, id: String, context: APIContext) -> Response {
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
            return html(.notFound, pages.render(view))
        }
        if let error = error as? APIError, error.status == .contentTooLarge {
            return message(.contentTooLarge, "The form was too large to read. Go back, reload the page and try again.")
        }
        if let error = error as? CardValidationError {
            return message(.unprocessableContent, Self.sentence(error.message) + " Go back and correct it.")
        }
        if let error = error as? VaultError, error.code == .checkoutSessionNotOpen {
            return message(.conflict, Self.sentence(error.message) + " Reload the page to see where it stands.")
        }
        context.logger.error("checkout page \(id.prefix(40)) failed: \(error)")
        return message(.internalServerError, "Something went wrong on our side; nothing was charged by this attempt. Reload the page and try again.")
    }

    func message(_ status: HTTPResponse.Status, _ text: String) -> Response {
        let view = CheckoutPages.View(
            title: "Payment",
            merchant: "",
            amount: "",
            id: "",
            csrf: "",
            notice: CheckoutPages.Notice(kind: "error", text: text),
            cancel: false
        )
        return html(status, pages.render(view))
    }

    func tax(of session: CheckoutSessionRecord) -> String? {
        guard let rate = session.taxRate, let amount = CheckoutReturn.tax(in: session) else { return nil }
        return "\(CheckoutPages.money(amount, currency: session.currency)) (\(rate) %)"
    }

    // MARK: - HTTP

    /// Headers every page carries: no caching, no framing, no referrer, and a policy that
    /// lets the page load only its own style sheet and script and post only to itself (its
    /// forms' redirects come back to it too: the page that ends a session sends the buyer on).
    func html(_ status: HTTPResponse.Status, _ body: String, returnsTo sources: [String] = []) -> Response {
        var headers = Self.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        // Each source is an origin or a scheme a stored address gave: no spaces, quotes or
        // semicolons can be in them (ReturnAddress refuses such addresses).
        var formAction = ["'self'"]
        for source in sources where !formAction.contains(source) { formAction.append(source) }
        headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            + "form-action \(formAction.joined(separator: " ")); frame-ancestors 'none'; base-uri 'none'"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    func redirect(to location: String) -> Response {
        var headers = Self.securityHeaders
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }

    func asset(_ body: ByteBuffer, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "public, max-age=3600"
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }

    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let permissionsPolicy = HTTPField.Name("Permissions-Policy")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    static let securityHeaders: HTTPFields = {
        var headers = HTTPFields()
        headers[.cacheControl] = "no-store"
        headers[Self.xFrameOptions] = "DENY"
        headers[Self.referrerPolicy] = "no-referrer"
        headers[.xContentTypeOptions] = "nosniff"
        // The camera for the page itself (its "Scan card"), never for anything it could embed;
        // the rest of what a page could ask for, for nobody.
        headers[Self.permissionsPolicy] = "camera=(self), microphone=(), geolocation=(), payment=(), usb=()"
        return headers
    }()

    // MARK: - Words

    static let unreadable = CheckoutPages.Notice(kind: "error", text: "The form could not be read. Fill it in again and press Pay.")

    /// A form with a field this page does not have: nothing was done with it.
    static func unknownField(_ name: String) -> CheckoutPages.Notice {
        CheckoutPages.Notice(
            kind: "error",
            text:
                "The form sent a field this page does not have (\(name.isEmpty ? "no name" : name)), so nothing was charged. Reload the page and try again."
        )
    }
    static let staleForm = CheckoutPages.Notice(
        kind: "error",
        text: "This form had expired or was not sent from this page, so nothing was charged. Enter the card again."
    )

    static func tries(_ count: Int) -> String { count == 1 ? "1 try" : "\(count) tries" }

    /// A validator message as a sentence: capital first letter, full stop.
    static func sentence(_ message: String) -> String {
        guard let first = message.first else { return message }
        let text = first.uppercased() + message.dropFirst()
        return text.hasSuffix(".") ? text : text + "."
    }

    static func brandName(_ id: String) -> String {
        CardBrand(id: id)?.displayName ?? id
    }

    // MARK: - The form's cookie

    /// The form cookie's name: `__Host-capture_pay` over https, `capture_pay` over http.
    var cookieName: String {
        secureCookies ? "__Host-" + Self.nonceCookie : Self.nonceCookie
    }

    /// The one-time mark's cookie: set by the answer to a payment or cancel that ended the
    /// session, read and cleared by the page it sends the browser to, which alone forwards
    /// the buyer to the merchant. Reloaded, or opened by anyone else, the ended page stays.
    var sentCookieName: String {
        secureCookies ? "__Host-" + Self.sentCookie : Self.sentCookie
    }

    func sentCookie(for sessionID: String, maxAge: Int) -> Cookie? {
        try? Cookie.validated(
            name: sentCookieName,
            value: sessionID,
            maxAge: maxAge,
            path: secureCookies ? "/" : "/pay",
            secure: secureCookies,
            httpOnly: true,
            sameSite: .strict
        )
    }

    /// The answer to a payment or cancel that ended session `id`: to its page, marked once.
    func ended(_ id: String) -> Response {
        var response = redirect(to: "/pay/\(id)?sent=1")
        if let cookie = sentCookie(for: id, maxAge: 120) { response.setCookie(cookie) }
        return response
    }
}
