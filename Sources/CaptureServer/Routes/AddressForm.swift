import Foundation
import HTTPTypes
import Payments
import Tokenizer

/// The form openapi.json gives an address a request names (a checkout session's `return_url`
/// and `cancel_url`, a webhook endpoint's `url`): its pattern and greatest length, read from the
/// document itself. An address of another form is refused as a request the document does not
/// allow (400 `parameter_invalid`); one of this form is one the vault's readers of addresses
/// (`ReturnAddress`, `WebAddress`) take, so only what an address means (a private network) is
/// left to their 422 `invalid_address`. A generated client or a schema fuzzer then finds the
/// server where the document says it is.
struct AddressForm: @unchecked Sendable {  // NSRegularExpression is immutable and thread-safe.
    let pattern: NSRegularExpression
    let maxLength: Int
    let kind: String
    /// The vault's reader of such an address: its words say why one is refused.
    let reader: @Sendable (_ value: String, _ param: String) throws(VaultError) -> Void

    /// Return and cancel URLs (`ReturnAddress`).
    static let returnAddress = forms.returnAddress
    /// Webhook URLs (`WebAddress`).
    static let webAddress = forms.webAddress

    /// Both forms, from one reading of the document.
    private static let forms: (returnAddress: AddressForm, webAddress: AddressForm) = {
        guard let root = try? JSONSerialization.jsonObject(with: Data(CaptureAPI.openAPIDocument)) as? [String: Any],
            let schemas = (root["components"] as? [String: Any])?["schemas"] as? [String: Any]
        else { preconditionFailure("openapi.json in the bundle is not a document with schemas") }
        return (
            AddressForm(
                schemas,
                "CheckoutSessionRequest",
                "return_url",
                kind: "an https:// page or your app's own scheme (com-your-app://done)"
            ) { (value, param) throws(VaultError) in _ = try ReturnAddress(value, param: param) },
            AddressForm(schemas, "WebhookEndpointRequest", "url", kind: "an http:// or https:// URL") { (value, param) throws(VaultError) in
                _ = try WebAddress(value, param: param)
            }
        )
    }()

    private init(
        _ schemas: [String: Any],
        _ schema: String,
        _ property: String,
        kind: String,
        reader: @escaping @Sendable (String, String) throws(VaultError) -> Void
    ) {
        guard let properties = (schemas[schema] as? [String: Any])?["properties"] as? [String: Any],
            let field = properties[property] as? [String: Any],
            let text = field["pattern"] as? String, let maxLength = field["maxLength"] as? Int,
            let pattern = try? NSRegularExpression(pattern: text)
        else { preconditionFailure("openapi.json gives \(schema).\(property) no pattern and maxLength") }
        self.pattern = pattern
        self.maxLength = maxLength
        self.kind = kind
        self.reader = reader
    }

    /// Refuses `value` when the document does not allow it, saying why in the vault's words
    /// when its reader refuses it too; nil passes.
    func check(_ value: String?, param: String) throws(APIError) {
        guard let value else { return }
        let fits =
            value.unicodeScalars.count <= maxLength
            && pattern.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil
        guard !fits else { return }
        var message =
            "\(param) must be \(kind) of at most \(maxLength) characters, in the form openapi.json's pattern gives "
            + "(a host name, IPv4 or bracketed IPv6 address, a port from 1 to 65535, and RFC 3986's characters, others percent-encoded)"
        do {
            try reader(value, param)
        } catch {
            message = error.message
        }
        throw APIError(.badRequest, .invalidRequest, code: "parameter_invalid", message: message, param: param)
    }
}
