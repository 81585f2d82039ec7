public import CardCapture
import Crypto
import Foundation
public import Tokenizer

/// What the hosted page (`/pay/cs_…`) needs of the vault. The page is reached by the
/// session's id alone, so nothing here is scoped to a merchant's key: the id is the buyer's
/// right to see the amount and pay it, and nothing more.
extension Payments {
    /// A session as its page shows it, with the merchant's name.
    public struct CheckoutPage: Sendable {
        public let session: CheckoutSessionRecord
        public let merchantName: String
        /// The payment, once the session is complete.
        public let transaction: TransactionRecord?
    }

    /// The session behind a page address, as it stands now (an open one past its time reads
    /// expired).
    public func checkoutPage(_ id: String) async throws(VaultError) -> CheckoutPage {
        guard ObjectID(id, kind: .checkoutSession) != nil,
            let stored = try await storing("read the checkout session", { try await store.checkoutSession(id: id) })
        else {
            throw VaultError(.checkoutSessionNotFound, "no checkout session \(id.prefix(40))", param: "id")
        }
        let session = current(stored)
        let merchant = try await storing("read the merchant") { try await store.merchant(id: session.merchantID) }
        var transaction: TransactionRecord?
        if let paid = session.transactionID { transaction = try await self.transaction(paid, merchantID: session.merchantID) }
        return CheckoutPage(session: session, merchantName: merchant?.name ?? "", transaction: transaction)
    }

    /// The buyer's "Cancel" on the page.
    public func cancelCheckoutPage(_ id: String) async throws(VaultError) -> CheckoutSessionRecord {
        let page = try await checkoutPage(id)
        return try await cancelCheckoutSession(id, merchantID: page.session.merchantID)
    }

    /// The validator the page checks typed cards with, on the vault's clock (so an expiry is
    /// judged as the token will judge it).
    public var cardValidator: CardValidator {
        CardValidator(clock: CardClock(now: vault.configuration.now))
    }

    /// How long a page's form stays good: a form older than this is refused ("this form had
    /// expired"), and the page shown with it carries a new one.
    public static let pageFormLifetime: Double = 60 * 60

    /// A new value for a browser's page cookie, issued by this vault: a random 128-bit nonce
    /// and its tag, `nonce.tag`, lower-case hex; with the nonce, which the form tokens bind.
    public func newPageCookie() -> (value: String, nonce: String) {
        let nonce = KeyRing.hex(SymmetricKey(size: .bits128))
        return (nonce + "." + vault.keys.pageCookieTag(nonce: nonce), nonce)
    }

    /// The nonce of a page cookie this vault issued; nil for any other value (the tag binds
    /// the nonce exactly, so nothing else about it needs checking).
    public func pageCookieNonce(_ value: String) -> String? {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 32 else { return nil }
        let nonce = String(parts[0])
        return vault.keys.pageCookieTagIsValid(String(parts[1]), nonce: nonce) ? nonce : nil
    }

    /// The page's anti-forgery token for the browser whose cookie holds `nonce`, issued now:
    /// `issued.code`, good for ``pageFormLifetime``.
    public func pageFormToken(sessionID: String, nonce: String) -> String {
        let issued = Int(vault.configuration.now().timeIntervalSince1970)
        return "\(issued)." + vault.keys.pageFormCode(sessionID: sessionID, nonce: nonce, issued: issued)
    }

    /// What the page's form sends to pay with a scan its camera made for `sessionID` in the
    /// browser whose cookie holds `nonce`: `scan_….code`, the code binding the scan to this
    /// session and this browser alone.
    public func pageScanReference(sessionID: String, scanID: String, nonce: String) -> String {
        scanID + "." + vault.keys.pageScanCode(sessionID: sessionID, scanID: scanID, nonce: nonce)
    }

    /// The scan a form's reference names, when the reference was made for `sessionID` in the
    /// browser whose cookie holds `nonce`; nil for anything else.
    public func pageScanID(_ reference: String, sessionID: String, nonce: String) -> String? {
        let parts = reference.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].hasPrefix("scan_"), parts[0].utf8.count <= 64 else { return nil }
        let scanID = String(parts[0])
        return vault.keys.pageScanCodeIsValid(String(parts[1]), sessionID: sessionID, scanID: scanID, nonce: nonce) ? scanID : nil
    }

    /// Whether a posted form's token belongs to this session and this browser's cookie, and is
    /// younger than ``pageFormLifetime``.
    public func pageFormTokenIsValid(_ token: String, sessionID: String, nonce: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count <= 12, let issued = Int(parts[0]) else { return false }
        let age = vault.configuration.now().timeIntervalSince1970 - Double(issued)
        // A minute's grace the other way, for servers sharing a vault with clocks apart.
        guard age <= Self.pageFormLifetime, age >= -60 else { return false }
        return vault.keys.pageFormCodeIsValid(String(parts[1]), sessionID: sessionID, nonce: nonce, issued: issued)
    }
}

/// Where the buyer goes when the page is done with them, and what the address tells the
/// merchant. The merchant's own query is kept; parameters of the same names are replaced.
///
/// - `query` format: `checkout_session=cs_…&status=complete` (or `canceled`, `expired`).
/// - `ifcc` format (Inner Fence's credit card terminal): `ifcc_responseType` (approved,
///   declined, cancelled or error), and when paid `ifcc_transactionId`, `ifcc_amount` ("10.99"),
///   `ifcc_currency`, `ifcc_redactedCardNumber` ("XXXXXXXXXXXX1111"), `ifcc_cardType`, and
///   `ifcc_taxAmount` / `ifcc_taxRate` when the session has a tax rate (the amount includes it).
public enum CheckoutReturn {
    /// The address for a session that has ended: complete (with its payment), canceled or
    /// expired. A canceled or expired session goes to its `cancel_url` when it has one.
    public static func url(for session: CheckoutSessionRecord, transaction: TransactionRecord?) -> String {
        let paid = session.status == CheckoutSessionRecord.complete ? transaction : nil
        let base = paid == nil ? (session.cancelURL ?? session.returnURL) : session.returnURL
        guard session.returnFormat == "ifcc" else {
            return appending([("checkout_session", session.id), ("status", session.status)], to: base)
        }
        guard let paid else {
            return appending([("ifcc_responseType", session.status == CheckoutSessionRecord.canceled ? "cancelled" : "error")], to: base)
        }
        let tax = session.taxRate.flatMap { rate in Self.tax(in: session).map { (amount: $0, rate: rate) } }
        let parameters = innerFence(
            status: paid.status,
            transactionID: paid.id,
            amount: paid.amount,
            currency: paid.currency,
            brand: paid.brand,
            last4: paid.last4,
            length: paid.panLength,
            tax: tax
        )
        return appending(parameters, to: base)
    }

    /// Inner Fence's parameters for a transaction the processor answered: `approved` with
    /// the payment's details (`declined`, `error` for the other outcomes). `tax` is the tax
    /// inside the amount and the rate as the request gave it.
    public static func innerFence(
        status: String,
        transactionID: String,
        amount: Int,
        currency: String,
        brand: String,
        last4: String,
        length: Int?,
        tax: (amount: Int, rate: String)?
    ) -> [(String, String)] {
        let exponent = (try? Currency(currency))?.exponent ?? 2
        var parameters = [
            ("ifcc_responseType", status == "succeeded" ? "approved" : status == "declined" ? "declined" : "error"),
            ("ifcc_transactionId", transactionID),
            ("ifcc_amount", decimal(amount, exponent: exponent)),
            ("ifcc_currency", currency),
            ("ifcc_redactedCardNumber", redacted(last4: last4, length: length, brand: brand)),
            ("ifcc_cardType", cardType(brand)),
        ]
        if let tax {
            parameters.append(("ifcc_taxAmount", decimal(tax.amount, exponent: exponent)))
            parameters.append(("ifcc_taxRate", tax.rate))
        }
        return parameters
    }

    /// `url` with `parameters` added to its query; the query's own parameters are kept,
    /// except those of the same names, which are replaced.
    public static func appending(_ parameters: [(String, String)], to url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        let names = Set(parameters.map(\.0))
        var items = (components.queryItems ?? []).filter { !names.contains($0.name) }
        items += parameters.map { URLQueryItem(name: $0.0, value: $0.1) }
        components.queryItems = items
        return components.string ?? url
    }

    /// The tax inside the session's amount, in minor units, when it has a tax rate.
    public static func tax(in session: CheckoutSessionRecord) -> Int? {
        guard let rate = session.taxRate, let thousandths = try? Payments.taxRate(rate) else { return nil }
        return taxIncluded(in: session.amount, thousandthsOfPercent: thousandths)
    }

    /// The tax inside an amount that includes it, to the nearest minor unit: 10.99 at 8.5 %
    /// holds 0.86.
    static func taxIncluded(in amount: Int, thousandthsOfPercent rate: Int) -> Int {
        let divisor = 100_000 + rate
        return (amount * rate + divisor / 2) / divisor
    }

    /// Minor units as a decimal string: 1099 with exponent 2 is "10.99"; 500 with 0 is "500".
    public static func decimal(_ amount: Int, exponent: Int) -> String {
        guard exponent > 0 else { return String(amount) }
        var scale = 1
        for _ in 0..<exponent { scale *= 10 }
        let fraction = String(amount % scale)
        return "\(amount / scale)." + String(repeating: "0", count: exponent - fraction.count) + fraction
    }

    /// "XXXXXXXXXXXX1111": the last four after an X for every other digit of the card's
    /// number (19 digits: 15 X), or when its length was not kept, of the brand's usual length
    /// (15 for American Express, 14 for Diners Club, else 16).
    static func redacted(last4: String, length: Int?, brand: String) -> String {
        let length = length ?? ["amex": 15, "diners": 14][brand] ?? 16
        return String(repeating: "X", count: max(length - last4.count, 0)) + last4
    }

    /// Inner Fence's card type names.
    static func cardType(_ brand: String) -> String {
        switch brand {
        case "visa": "Visa"
        case "mastercard": "MasterCard"
        case "amex": "Amex"
        case "discover": "Discover"
        case "maestro": "Maestro"
        default: "Unknown"
        }
    }
}
