import CaptureClient
import CardCapture
import Foundation
import Tokenizer

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
        print("\(token.id)  \(token.card.brand.rawValue) ****\(token.card.last4)  expires \(StoreDate.iso8601(token.expiresAt))")
    }

    /// A token for the card: the object and the body as sent; the API's refusal ends the
    /// command (``APIClient/call(retry:_:)``).
    func createToken(_ card: CardFields, amount: Int?, currency: String?) async throws -> (Components.Schemas.Token, Data) {
        let request = Components.Schemas.CardTokenRequest(
            number: card.number,
            expMonth: card.month,
            expYear: card.year,
            cvc: card.cvc,
            holder: card.holder,
            amount: amount,
            currency: try currency.map(APIClient.currency)
        )
        return try await call { try await $0.createToken(body: .json(.CardTokenRequest(request))).created.body.json }
    }
}
