import CardCapture
import Foundation

/// A card as the token endpoint takes it.
struct CardFields {
    let number: String
    let month: Int
    let year: Int
    let cvc: String?
    let holder: String?
}

extension CardFields {
    /// A card typed at the prompt; `cvc` and `holder` stand in for fields it did not ask.
    init(_ card: ManualEntry.Card, cvc: String? = nil, holder: String? = nil) {
        self.init(
            number: card.pan.revealed,
            month: card.expiry.month,
            year: card.expiry.year,
            cvc: card.cvc?.revealed ?? cvc,
            holder: card.holder ?? holder
        )
    }
}

extension APIClient {
    /// Exchanges a card for a token and prints it: the server's JSON answer with `json`, else
    /// one line (id, brand, last four digits, when it expires).
    func tokenize(_ card: CardFields, amount: Int?, currency: String?, json: Bool) async throws {
        let (token, data) = try await createToken(card, amount: amount, currency: currency)
        if json {
            print(String(decoding: data, as: UTF8.self))
            return
        }
        let summary = token["card"] as? [String: Any] ?? [:]
        let last4 = summary["last4"] as? String ?? "????"
        print(
            "\(token["id"] as? String ?? "?")  \(summary["brand"] as? String ?? "card") ****\(last4)  expires \(token["expires_at"] as? String ?? "?")"
        )
    }

    /// A token for the card: the object and the body as sent; the API's refusal ends the
    /// command (``APIClient/object(_:_:)``).
    func createToken(_ card: CardFields, amount: Int?, currency: String?) async throws -> ([String: Any], Data) {
        var body: [String: Any] = ["number": card.number, "exp_month": card.month, "exp_year": card.year]
        body["cvc"] = card.cvc
        body["holder"] = card.holder
        body["amount"] = amount
        body["currency"] = currency
        let (status, data) = try await send("POST", "v1/tokens", body: body)
        return (try Self.object(status, data), data)
    }
}
