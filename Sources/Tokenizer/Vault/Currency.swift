/// An ISO 4217 currency, with the number of digits after its decimal point (its exponent):
/// amounts are always whole numbers of minor units (cents for USD, yen for JPY, fils for KWD).
///
/// ```swift
/// let yen = try Currency("jpy")   // JPY, exponent 0: 500 is ¥500
/// ```
public struct Currency: Sendable, Hashable, CustomStringConvertible {
    /// The upper-case three-letter code.
    public let code: String
    /// Digits after the decimal point.
    public let exponent: Int

    /// Reads a code in upper or lower case ("USD", "usd", not "Usd"); throws
    /// ``VaultError/Code/invalidCurrency`` for codes that are not an active ISO 4217 currency.
    public init(_ code: String) throws(VaultError) {
        let upper = code.uppercased()
        guard code == upper || code == code.lowercased(), let exponent = Self.exponents[upper] else {
            throw VaultError(.invalidCurrency, "'\(code.prefix(8))' is not an ISO 4217 currency code: use three letters such as EUR or USD")
        }
        self.code = upper
        self.exponent = exponent
    }

    public var description: String { code }

    /// A plain decimal ("10.99", "8.5", "500") as a whole number of 10^-`places` units:
    /// "10.99" with 2 places is 1099. Nil for anything but ASCII digits with at most `places`
    /// decimals (no sign, no exponent, at most 12 digits before the point).
    public static func units(of text: String, places: Int) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count == 2 ? parts[1] : ""
        guard !whole.isEmpty, whole.count <= 12, fraction.count <= places, parts.count == 1 || !fraction.isEmpty,
            (whole + fraction).allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return Int(whole + fraction + String(repeating: "0", count: places - fraction.count))
    }

    /// The largest amount accepted in one transaction, in minor units: eight digits in every
    /// currency (99,999,999: $999,999.99, ¥99,999,999), as Stripe caps one payment. One limit
    /// for all is one a document can state (openapi.json's `maximum`), so that an amount it
    /// allows is one the vault takes in any currency.
    public var maximumAmount: Int { Self.maximumAmount }

    public static let maximumAmount = 99_999_999

    /// Active ISO 4217 codes and their exponents (ISO 4217, list one). Codes without a minor
    /// unit (funds, metals, XXX) are not payment currencies and are left out.
    static let exponents: [String: Int] = {
        var table: [String: Int] = [:]
        let zero = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"
        let three = "BHD IQD JOD KWD LYD OMR TND"
        let four = "CLF UYW"
        let two = """
            AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF \
            CHF CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL \
            HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP \
            MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD \
            SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS \
            VED VES WST XCD YER ZAR ZMW ZWG
            """
        for (codes, exponent) in [(zero, 0), (two, 2), (three, 3), (four, 4)] {
            for code in codes.split(separator: " ") { table[String(code)] = exponent }
        }
        return table
    }()
}
