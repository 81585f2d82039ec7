import CardCapture
import Testing

@Suite("Card brands")
struct BrandTests {
    /// One test number per brand (and per range where a brand has several kinds), with its
    /// grouping: the networks' published test numbers, and for the rest a prefix of the
    /// brand's completed with zeros and a check digit.
    static let numbers: [(String, CardBrand, [Int])] = [
        ("4111111111111111", .visa, [4, 4, 4, 4]),
        ("4111111111111111003", .visa, [4, 4, 4, 4, 3]),
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
        ("2131000000000008", .jcb, [4, 4, 4, 4]),
        ("1800000000000000", .jcb, [4, 4, 4, 4]),
        ("6200000000000005", .unionpay, [4, 4, 4, 4]),
        ("6205500000000000004", .unionpay, [4, 4, 4, 4, 3]),
        ("62000000000005", .unionpay, [4, 4, 4, 2]),
        ("6759649826438453", .maestro, [4, 4, 4, 4]),
        ("675964982648", .maestro, [4, 4, 4]),
        ("4936980000000004", .maestro, [4, 4, 4, 4]),
        ("2200000000000004", .mir, [4, 4, 4, 4]),
        ("5066991111111118", .elo, [4, 4, 4, 4]),
        ("4011780000000006", .elo, [4, 4, 4, 4]),
        ("6509010000000002", .elo, [4, 4, 4, 4]),
        ("6062828888666688", .hipercard, [4, 4, 4, 4]),
        ("3841000000000007", .hipercard, [4, 4, 4, 4]),
        ("3841400000000009", .hipercard, [4, 4, 4, 4]),
        ("6370950000000005", .hiper, [4, 4, 4, 4]),
        ("6373742300000000", .hiper, [4, 4, 4, 4]),
        ("5061000000000005", .verve, [4, 4, 4, 4]),
        ("9792000000000003", .troy, [4, 4, 4, 4]),
        ("6502740000000001", .troy, [4, 4, 4, 4]),
        ("6506000000000006", .troy, [4, 4, 4, 4]),
        ("5895620000000002", .naranja, [4, 4, 4, 4]),
        ("4029180000000009", .naranja, [4, 4, 4, 4]),
        ("5275720000000000", .naranja, [4, 4, 4, 4]),
    ]

    @Test("every brand is detected from a whole valid number", arguments: numbers.indices)
    func detectsWhole(_ index: Int) throws {
        let (number, brand, grouping) = Self.numbers[index]
        #expect(CardBrand.detect(number) == brand)
        let pan = try PAN(number)
        #expect(pan.brand == brand)
        #expect(brand.grouping(forLength: number.count) == grouping)
    }

    @Test("every brand the product names is covered by a test number, in the order brands are tried")
    func allCovered() {
        let covered = Set(Self.numbers.map(\.1.id))
        #expect(covered == Set(CardBrand.all.map(\.id)))
        #expect(
            CardBrand.all.map(\.id) == [
                "visa", "mastercard", "amex", "diners", "discover", "jcb", "unionpay", "verve", "maestro", "elo", "mir", "hiper",
                "hipercard", "troy", "naranja",
            ]
        )
    }

    @Test(
        "the brands a number can be, from its first digit (brand when one fits, candidates when several)",
        arguments: [
            (
                "",
                [
                    "visa", "mastercard", "amex", "diners", "discover", "jcb", "unionpay", "verve", "maestro", "elo", "mir", "hiper", "hipercard",
                    "troy", "naranja",
                ]
            ),
            ("4", ["visa", "maestro", "elo", "naranja"]), ("41", ["visa"]), ("4029", ["visa", "naranja"]),
            ("402918", ["naranja"]), ("402919", ["visa"]), ("4011", ["visa", "elo"]), ("401178", ["elo"]), ("4936", ["visa", "maestro"]),
            ("2", ["mastercard", "jcb", "mir"]), ("22", ["mastercard", "mir"]), ("222", ["mastercard"]), ("2720", ["mastercard"]),
            ("2721", []), ("2200", ["mir"]), ("2205", []), ("21", ["jcb"]), ("1", ["jcb"]),
            ("5", ["mastercard", "verve", "maestro", "elo", "naranja"]),
            ("52", ["mastercard", "naranja"]), ("527572", ["naranja"]), ("58", ["maestro", "naranja"]), ("589562", ["naranja"]),
            ("51", ["mastercard"]), ("50", ["verve", "maestro", "elo"]), ("3", ["amex", "diners", "jcb", "hipercard"]), ("34", ["amex"]),
            ("35", ["jcb"]), ("359", []), ("30", ["diners"]), ("38", ["diners", "hipercard"]), ("3841", ["diners", "hipercard"]),
            ("384100", ["hipercard"]), ("6", ["discover", "unionpay", "maestro", "elo", "hiper", "hipercard", "troy"]),
            ("60", ["discover", "maestro", "hipercard"]),
            ("6011", ["discover"]), ("65", ["discover", "maestro", "elo", "troy"]), ("6500", ["discover", "maestro", "elo"]), ("650031", ["elo"]),
            ("6502", ["discover", "maestro", "troy"]), ("650274", ["troy"]), ("6509", ["discover", "maestro", "elo", "troy"]),
            ("62", ["unionpay", "maestro", "elo"]),
            ("620", ["unionpay"]), ("627780", ["elo"]), ("506100", ["verve"]), ("637374", ["maestro", "hiper"]), ("63737423", ["hiper"]),
            ("8", ["unionpay"]), ("9", ["troy"]), ("98", []), ("7", []), ("0", []), ("4x", []),
        ]
    )
    func partial(_ prefix: String, _ expected: [String]) {
        let match = CardBrand.detectPartial(prefix)
        #expect(match.candidates.map(\.id) == expected, "\(prefix)")
        #expect(match.brand?.id == (expected.count == 1 ? expected[0] : nil))
    }

    @Test("where ranges overlap, the longer matching prefix wins")
    func overlaps() {
        #expect(CardBrand.detect("6509230000000000") == .elo)  // Elo 650901-650978 over Discover 65, tried before Troy
        #expect(CardBrand.detect("6503000000000000") == .troy)  // Troy 650274-650923 over Discover 65
        #expect(CardBrand.detect("6509800000000000") == .discover)  // past both Troy's and Elo's ranges
        #expect(CardBrand.detect("5895620000000002") == .naranja)  // over Maestro's 58
        #expect(CardBrand.detect("4029180000000009") == .naranja)  // over Visa's 4
        #expect(CardBrand.detect("6500000000000000") == .discover)
        #expect(CardBrand.detect("6011000000000000") == .discover)  // over Maestro's 6
        #expect(CardBrand.detect("6300000000000000") == .maestro)
        #expect(CardBrand.detect("3841600000000000") == .hipercard)  // over Diners' 38
        #expect(CardBrand.detect("3800000000000000") == .diners)
        #expect(CardBrand.detect("5067000000000000") == .elo)  // Elo 506699-506778, outside Maestro's ranges
        #expect(CardBrand.detect("5061000000000000") == .verve)  // Verve and Maestro both 6 digits: Verve is tried first
    }

    @Test("messages name a brand with its article: an Elo, an American Express, a Visa")
    func articles() throws {
        #expect(CardBrand.elo.withArticle == "an Elo" && CardBrand.amex.withArticle == "an American Express")
        #expect(CardBrand.visa.withArticle == "a Visa" && CardBrand.naranja.withArticle == "a Naranja")
        let error = #expect(throws: CardValidationError.self) { try PAN("506699111111") }
        #expect(error?.message == "this number has only 12 digits; an Elo number has 16", "\(error?.message ?? "")")
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

    @Test(
        "lengths, security codes and the check digit",
        arguments: [
            ("visa", [16, 18, 19], "CVV", 3, true), ("mastercard", [16], "CVC", 3, true), ("amex", [15], "CID", 4, true),
            ("diners", [14, 16, 19], "CVV", 3, true), ("discover", [16, 19], "CID", 3, true), ("jcb", [16, 17, 18, 19], "CVV", 3, true),
            ("unionpay", [14, 15, 16, 17, 18, 19], "CVN", 3, false), ("verve", [16, 18, 19], "CVV", 3, true),
            ("maestro", Array(12...19), "CVC", 3, true), ("elo", [16], "CVE", 3, true), ("mir", [16, 17, 18, 19], "CVP2", 3, true),
            ("hiper", [16], "CVC", 3, true), ("hipercard", [16], "CVC", 3, true), ("troy", [16], "CVV", 3, true),
            ("naranja", [16], "CVV", 3, true),
        ]
    )
    func attributes(_ id: String, _ lengths: [Int], _ cvcName: String, _ cvcLength: Int, _ checksLuhn: Bool) throws {
        let brand = try #require(CardBrand(id: id))
        #expect(brand.lengths == lengths)
        #expect(brand.cvcName == cvcName)
        #expect(brand.cvcLength == cvcLength)
        #expect(brand.checksLuhn == checksLuhn)
    }

    @Test("brand lookup by id and names for a message")
    func lookup() {
        #expect(CardBrand(id: "amex") == .amex)
        #expect(CardBrand(id: "nope") == nil)
        #expect(CardBrand.diners.grouping(forLength: 16) == [4, 4, 4, 4])
        #expect(CardBrand.list([.visa]) == "Visa")
        #expect(CardBrand.list([.visa, .maestro, .elo]) == "Visa, Maestro or Elo")
        #expect(CardBrand.list(CardBrand.all) == "Visa, Mastercard, American Express or 12 more")
    }
}
