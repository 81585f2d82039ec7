import Foundation
import Testing

@testable import Payments
@testable import Tokenizer

@Suite("Checkout return addresses")
struct CheckoutReturnTests {
    static func session(
        status: String,
        returnURL: String = "https://shop.example/done?order=17",
        cancelURL: String? = nil,
        format: String = "query",
        amount: Int = 1099,
        currency: String = "USD",
        taxRate: String? = nil
    ) -> CheckoutSessionRecord {
        CheckoutSessionRecord(
            id: "cs_test",
            merchantID: "mer_test",
            status: status,
            amount: amount,
            currency: currency,
            description: nil,
            returnURL: returnURL,
            cancelURL: cancelURL,
            allowedBrands: nil,
            returnFormat: format,
            taxRate: taxRate,
            clientID: nil,
            savePaymentMethod: false,
            metadata: [:],
            transactionID: "tx_test",
            attempts: 1,
            createdAt: Date(timeIntervalSince1970: 0),
            expiresAt: Date(timeIntervalSince1970: 1800),
            endedAt: nil
        )
    }

    static func transaction(brand: String = "amex", last4: String = "0005", amount: Int = 1099, currency: String = "USD") -> TransactionRecord {
        TransactionRecord(
            id: "tx_test",
            merchantID: "mer_test",
            status: "succeeded",
            amount: amount,
            currency: currency,
            refundedAmount: 0,
            brand: brand,
            bin: "378282",
            last4: last4,
            expMonth: 12,
            expYear: 2030,
            createdAt: Date(timeIntervalSince1970: 0)
        )
    }

    @Test("query format: the merchant's parameters kept, ours added, a same-named one of theirs replaced")
    func query() {
        let paid = Self.session(status: "complete", returnURL: "https://shop.example/done?order=17&status=pending")
        #expect(
            CheckoutReturn.url(for: paid, transaction: Self.transaction())
                == "https://shop.example/done?order=17&checkout_session=cs_test&status=complete"
        )
        let canceled = Self.session(status: "canceled", cancelURL: "https://shop.example/cart")
        #expect(CheckoutReturn.url(for: canceled, transaction: nil) == "https://shop.example/cart?checkout_session=cs_test&status=canceled")
        // No cancel URL: back to the return URL, saying what happened.
        let expired = Self.session(status: "expired")
        #expect(CheckoutReturn.url(for: expired, transaction: nil) == "https://shop.example/done?order=17&checkout_session=cs_test&status=expired")
    }

    @Test("ifcc format: the redacted number fits the brand's length, amounts are decimals in the currency's exponent")
    func innerFence() throws {
        let paid = Self.session(status: "complete", format: "ifcc", amount: 500, currency: "JPY", taxRate: "10")
        let url = CheckoutReturn.url(for: paid, transaction: Self.transaction(amount: 500, currency: "JPY"))
        let items = try #require(URLComponents(string: url)?.queryItems)
        let values = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") })
        #expect(values["ifcc_redactedCardNumber"] == "XXXXXXXXXXX0005")
        #expect(values["ifcc_cardType"] == "Amex")
        #expect(values["ifcc_amount"] == "500" && values["ifcc_currency"] == "JPY")
        #expect(values["ifcc_taxAmount"] == "45" && values["ifcc_taxRate"] == "10")  // 500 × 10 / 110 = 45.45
        #expect(values["order"] == "17")
        let canceled = Self.session(status: "canceled", format: "ifcc")
        #expect(CheckoutReturn.url(for: canceled, transaction: nil).hasSuffix("?order=17&ifcc_responseType=cancelled"))
        let expired = Self.session(status: "expired", format: "ifcc")
        #expect(CheckoutReturn.url(for: expired, transaction: nil).hasSuffix("?order=17&ifcc_responseType=error"))
    }

    @Test(
        "minor units as decimals, and the tax inside a tax-inclusive amount",
        arguments: [
            (1099, 2, "10.99"), (5, 2, "0.05"), (100, 2, "1.00"), (500, 0, "500"), (123_456, 3, "123.456"), (0, 2, "0.00"),
        ]
    )
    func decimals(amount: Int, exponent: Int, text: String) {
        #expect(CheckoutReturn.decimal(amount, exponent: exponent) == text)
    }

    @Test("tax included: 10.99 at 8.5 % holds 0.86; 0 % holds nothing; 100 % holds half")
    func tax() {
        #expect(CheckoutReturn.taxIncluded(in: 1099, thousandthsOfPercent: 8500) == 86)
        #expect(CheckoutReturn.taxIncluded(in: 1099, thousandthsOfPercent: 0) == 0)
        #expect(CheckoutReturn.taxIncluded(in: 1000, thousandthsOfPercent: 100_000) == 500)
        #expect(CheckoutReturn.cardType("mastercard") == "MasterCard" && CheckoutReturn.cardType("jcb") == "Unknown")
    }
}
