import Foundation

/// A card as the token endpoint takes it.
struct CardFields {
    let number: String
    let month: Int
    let year: Int
    let cvc: String?
    let holder: String?
}

extension APIClient {
    /// Exchanges a card for a token and prints it: the server's JSON answer with `json`, else
    /// one line (id, brand, last four digits, when it expires).
    func tokenize(_ card: CardFields, amount: Int?, currency: String?, json: Bool) async throws {
        var body: [String: Any] = ["number": card.number, "exp_month": card.month, "exp_year": card.year]
        body["cvc"] = card.cvc
        body["holder"] = card.holder
        body["amount"] = amount
        body["currency"] = currency
        let (status, data) = try await send("POST", "v1/tokens", body: body)
        let token = try Self.object(status, data)
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
}
