import CardCapture
import Testing

@Suite("Card brands")
struct BrandTests {
    /// One published test number per brand, with its grouping.
    static let numbers: [(String, CardBrand, [Int])] = [
        ("4111111111111111", .visa, [4, 4, 4, 4]),
        ("4222222222222", .visa, [4, 4, 4, 1]),
        ("5555555555554444", .mastercard, [4, 4, 4, 4]),
        ("2223003122003222", .mastercard, [4, 4, 4, 4]),
        ("2720990000000007", .mastercard, [4, 4, 4, 4]),
        ("378282246310005", .amex, [4, 6, 5]),
        ("341111111111111", .amex, [4, 6, 5]),
        ("6011111111111117", .discover, [4, 4, 4, 4]),
        ("6445644564456445", .discover, [4, 4, 4, 4]),
        ("30569309025904", .diners, [4, 6, 4]),
        ("36227206271667", .diners, [4, 6, 4]),
        ("3530111333300000", .jcb, [4, 4, 4, 4]),
        ("6200000000000005", .unionpay, [4, 4, 4, 4]),
        ("6205500000000000004", .unionpay, [4, 4, 4, 4, 3]),
        ("6759649826438453", .maestro, [4, 4, 4, 4]),
        ("2200000000000004", .mir, [4, 4, 4, 4]),
        ("5066991111111118", .elo, [4, 4, 4, 4]),
        ("4011780000000006", .elo, [4, 4, 4, 4]),
        ("6062828888666688", .hipercard, [4, 4, 4, 4]),
        ("6370950000000005", .hiper, [4, 4, 4, 4]),
        ("5061000000000005", .verve, [4, 4, 4, 4]),
    ]

    @Test("every brand is detected from a whole valid number", arguments: numbers.indices)
    func detectsWhole(_ index: Int) throws {
        let (number, brand, grouping) = Self.numbers[index]
        #expect(CardBrand.detect(number) == brand)
        let pan = try PAN(number)
        #expect(pan.brand == brand)
        #expect(brand.grouping(forLength: number.count) == grouping)
    }

    @Test("every brand the product names is covered by a test number")
    func allCovered() {
        let covered = Set(Self.numbers.map(\.1.id))
        #expect(covered == Set(CardBrand.all.map(\.id)))
        #expect(
            CardBrand.all.map(\.id) == [
                "visa", "mastercard", "amex", "discover", "diners", "jcb", "unionpay", "maestro", "mir", "elo",
                "hipercard", "hiper", "verve",
            ]
        )
    }

    @Test("Mastercard's 2-series starts at 2221 and ends at 2720")
    func mastercardRange() {
        #expect(CardBrand.detect("2220990000000000") != .mastercard)
        #expect(CardBrand.detect("2221000000000000") == .mastercard)
        #expect(CardBrand.detect("2720999999999999") == .mastercard)
        #expect(CardBrand.detect("2721000000000000") == nil)
        #expect(CardBrand.detect("5000000000000000") == .maestro)
        #expect(CardBrand.detect("5100000000000000") == .mastercard)
        #expect(CardBrand.detect("5599999999999999") == .mastercard)
    }

    @Test("partial input names the brand as soon as it is known")
    func partial() {
        #expect(CardBrand.detectPartial("").brand == nil)
        #expect(CardBrand.detectPartial("4").brand == .visa)
        // Elo's 4011 78 range could still follow a 4.
        #expect(CardBrand.detectPartial("4").candidates.contains(.elo))
        #expect(CardBrand.detectPartial("4242").isFinal)
        #expect(CardBrand.detectPartial("5").brand == nil)
        #expect(Set(CardBrand.detectPartial("5").candidates) == [.mastercard, .maestro, .elo, .verve])
        #expect(CardBrand.detectPartial("51").brand == .mastercard)
        #expect(CardBrand.detectPartial("34").brand == .amex)
        #expect(CardBrand.detectPartial("3").brand == nil)
        #expect(CardBrand.detectPartial("3").candidates.contains(.amex))
        #expect(CardBrand.detectPartial("3").candidates.contains(.jcb))
        #expect(CardBrand.detectPartial("35").brand == nil)
        #expect(CardBrand.detectPartial("352").brand == nil)
        #expect(CardBrand.detectPartial("3528").brand == .jcb)
        #expect(CardBrand.detectPartial("22").brand == nil)
        #expect(CardBrand.detectPartial("2200").brand == .mir)
        #expect(CardBrand.detectPartial("2221").brand == .mastercard)
        #expect(CardBrand.detectPartial("6011 1").brand == .discover)
        #expect(CardBrand.detectPartial("65").brand == .discover)
        #expect(CardBrand.detectPartial("650031").brand == .elo)
        #expect(CardBrand.detectPartial("9").candidates.isEmpty)
        #expect(CardBrand.detectPartial("4x").brand == nil)
    }

    @Test("lengths and CVC sizes")
    func attributes() {
        #expect(CardBrand.amex.cvcLength == 4)
        #expect(CardBrand.all.filter { $0 != .amex }.allSatisfy { $0.cvcLength == 3 })
        #expect(CardBrand.visa.lengths == [13, 16, 19])
        #expect(CardBrand.amex.lengths == [15])
        #expect(CardBrand.diners.grouping(forLength: 16) == [4, 4, 4, 4])
        #expect(CardBrand(id: "amex") == .amex)
        #expect(CardBrand(id: "nope") == nil)
    }
}
