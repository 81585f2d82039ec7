import CaptureServer
import Foundation
import Payments
import Testing
import Tokenizer

/// openapi.json's patterns for the addresses a request names are the server's first check: the
/// document must refuse what the vault's reader of addresses refuses by form, or a request the
/// document allows would be refused (the schema fuzzer's hypothesis runs check the other way).
@Suite("The document's address patterns")
struct AddressFormTests {
    static func pattern(_ schema: String, _ property: String) throws -> NSRegularExpression {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(CaptureAPI.openAPIDocument)) as? [String: Any])
        let schemas = try #require((root["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let field = try #require(((schemas[schema] as? [String: Any])?["properties"] as? [String: Any])?[property] as? [String: Any])
        return try NSRegularExpression(pattern: try #require(field["pattern"] as? String))
    }

    static func matches(_ expression: NSRegularExpression, _ text: String) -> Bool {
        expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    @Test("every scheme the vault refuses as a return address is outside the pattern, in any case; apps' and web addresses are in it")
    func refusedSchemes() throws {
        let returns = try Self.pattern("CheckoutSessionRequest", "return_url")
        #expect(try Self.pattern("CheckoutSessionSavingCardRequest", "return_url").pattern == returns.pattern)
        let schemes = ReturnAddress.refusedSchemes.sorted() + ReturnAddress.refusedPrefixes.map { $0 + "x" }
        for scheme in schemes {
            for spelling in [scheme, scheme.uppercased()] {
                for text in ["\(spelling)://shop.example/done", "\(spelling):done"] {
                    #expect(!Self.matches(returns, text), "\(text)")
                    #expect(throws: VaultError.self, "\(text)") { try ReturnAddress(text, param: "return_url") }
                }
            }
        }
        for text in ["https://shop.example/done?order=1", "HTTP://[2001:db8::1]:8080/x", "com-your-app://action/?record_id=123", "myapp:done#x"] {
            #expect(Self.matches(returns, text), "\(text)")
            #expect(throws: Never.self, "\(text)") { try ReturnAddress(text, param: "return_url") }
        }
        let web = try Self.pattern("WebhookEndpointRequest", "url")
        for text in ["http://2130706433/", "http://0x7f.0.0.1/", "http://user@shop.example/", "https://shop.example:0/", "ftp://shop.example/"] {
            #expect(!Self.matches(web, text), "\(text)")
        }
    }
}
