import Testing

@testable import Payments
@testable import Tokenizer

@Suite("Sealed card data: the compact format, and the JSON of older records")
struct SealedCardTests {
    @Test(
        "number and holder come back as they went in",
        arguments: [
            ("4242424242424242", nil),
            ("378282246310005", "Zoë O'Brien \"Jr\" \\ 李"),
            ("6200000000000005", ""),
        ] as [(String, String?)]
    )
    func roundTrip(number: String, holder: String?) throws {
        let sealed = Vault.encode(Vault.SealedCard(number: number, holder: holder))
        #expect(sealed.first == (holder == nil ? 1 : 2))
        let card = try Vault.decode(sealed)
        #expect(card.number == number)
        #expect(card.holder == holder)
    }

    @Test("records sealed as JSON before the compact format still open")
    func olderJSON() throws {
        let named = try Vault.decode(Array(#"{"number":"4242424242424242","holder":"Ada \"L\""}"#.utf8))
        #expect(named.number == "4242424242424242")
        #expect(named.holder == "Ada \"L\"")
        let unnamed = try Vault.decode(Array(#"{"number":"5555555555554444","holder":null}"#.utf8))
        #expect(unnamed.holder == nil)
    }

    @Test(
        "damaged data is card_data_unavailable, never a crash or a wrong number",
        arguments: [[], [1], [2, 16, 0x34, 0x32], [9, 1, 0x34], Array("{\"number\":".utf8)] as [[UInt8]]
    )
    func damaged(bytes: [UInt8]) {
        let error = #expect(throws: VaultError.self) { try Vault.decode(bytes) }
        #expect(error?.code == .cardDataUnavailable)
    }
}
