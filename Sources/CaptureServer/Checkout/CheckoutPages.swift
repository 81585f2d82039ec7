import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore
import Payments
import Tokenizer

/// The hosted checkout page's template, style sheet and script (the `Pages` folder), loaded
/// once, and the views it is rendered from.
struct CheckoutPages: Sendable {
    private let template: MustacheTemplate
    /// The style sheet and the script (with the brand table in front of it), as served.
    let styleSheet: ByteBuffer
    let script: ByteBuffer

    static let shared = CheckoutPages()

    private init() {
        func text(_ name: String, _ ext: String) -> String {
            guard let url = Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "Pages"),
                let text = try? String(contentsOf: url, encoding: .utf8)
            else {
                // The files are part of the target; without them the build itself is broken.
                preconditionFailure("Pages/\(name).\(ext) is missing from the CaptureServer bundle")
            }
            return text
        }
        do {
            template = try MustacheTemplate(string: text("checkout", "mustache"))
        } catch {
            preconditionFailure("Pages/checkout.mustache does not parse: \(error)")
        }
        styleSheet = ByteBuffer(string: text("checkout", "css"))
        script = ByteBuffer(string: "const BRANDS = " + Self.brandTable() + ";\n" + text("checkout", "js"))
    }

    func render(_ view: View) -> String {
        template.render(view)
    }

    /// CardBrand.all for the script: name, lengths, groups per length, security code, IIN ranges.
    private static func brandTable() -> String {
        struct Brand: Encodable {
            let name: String
            let lengths: [Int]
            let groups: [String: [Int]]
            let cvcName: String
            let cvcLength: Int
            let ranges: [[Int]]
        }
        let brands = CardBrand.all.map { brand in
            Brand(
                name: brand.displayName,
                lengths: brand.lengths,
                groups: Dictionary(uniqueKeysWithValues: brand.lengths.map { (String($0), brand.grouping(forLength: $0)) }),
                cvcName: brand.cvcName,
                cvcLength: brand.cvcLength,
                ranges: brand.iinRanges.map { [$0.lowerBound, $0.upperBound] }
            )
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(brands) else { preconditionFailure("the brand table does not encode") }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: - Views (the template's names)

    struct View {
        var title: String
        var merchant: String
        /// The amount in its currency, for the Pay button.
        var amount: String
        var id: String
        var csrf: String
        var summary: Summary?
        var notice: Notice?
        var form: Form?
        /// Whether the buyer may cancel (the session is open).
        var cancel: Bool
        var ended: Ended?
        /// Said above the Pay button when the session saves the card for the merchant's
        /// client (`save_payment_method`): the buyer is told before paying.
        var saving: String? = nil
    }

    struct Summary {
        var description: String?
        var amount: String
        var tax: String?
    }

    struct Notice {
        /// `error` or `info`.
        var kind: String
        var text: String
    }

    /// The form as typed (never the security code), with each field's error.
    struct Form {
        var number = ""
        var expiry = ""
        var name = ""
        var brand = ""
        var cvcLabel = "Security code"
        var cvcPlaceholder = "•••"
        var numberError: String?
        var expiryError: String?
        var cvcError: String?
        var nameError: String?
    }

    struct Ended {
        var heading: String
        var text: String
        var link: String?
        /// Where the page sends the buyer at once (a session paid or canceled): a refresh, not
        /// a form's redirect, so no form-action policy stands in the way.
        var forward: String?
    }

    // MARK: - Money

    /// "$10.99", "¥500", "KWD 123.456": the amount in its currency, as a buyer reads it.
    static func money(_ amount: Int, currency code: String) -> String {
        let exponent = (try? Currency(code))?.exponent ?? 2
        var value = Decimal(amount)
        for _ in 0..<exponent { value /= 10 }
        return value.formatted(.currency(code: code).locale(Locale(identifier: "en_US")))
    }
}
