package import CardCapture
package import Foundation

extension Vault {
    /// Seals a spent token's card (number and holder, never its CVC) for a client to be
    /// charged again (``PaymentMethodRecord/sealedCard``), under this server's card key.
    package func sealSaved(_ card: SpentCard, client: String) throws(VaultError) -> Data {
        try keys.seal(
            Self.encode(SealedCard(number: card.pan.revealed, holder: card.holder)),
            for: .card,
            context: Self.savedCardContext(client: client, fingerprint: card.fingerprint)
        )
    }

    /// A saved payment method's card, opened for one authorization.
    package func openSaved(_ method: PaymentMethodRecord) throws(VaultError) -> (pan: PAN, expiry: Expiry, holder: String?) {
        guard method.keyID == keys.keyID else {
            throw VaultError(.cardDataUnavailable, "payment method \(method.id) is sealed under \(method.keyID), a key this server does not hold")
        }
        let context = Self.savedCardContext(client: method.clientID, fingerprint: method.fingerprint)
        let card = try Self.decode(try keys.open(method.sealedCard, for: .card, context: context))
        guard let pan = try? PAN(card.number), let expiry = try? Expiry(month: method.expMonth, year: method.expYear) else {
            throw VaultError(.cardDataUnavailable, "payment method \(method.id) holds card data that is no longer valid")
        }
        return (pan, expiry, card.holder)
    }

    /// A saved card is sealed for its client and card, which stay the same when the record
    /// is brought up to date with a new expiry.
    static func savedCardContext(client: String, fingerprint: String) -> String {
        "pm:" + client + ":" + fingerprint
    }
}
