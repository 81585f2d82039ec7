import CaptureServer
import CardCapture
import Foundation
import Hummingbird
import HummingbirdTesting
import Payments
import Testing
import Tokenizer

@Suite("The OpenAPI document is true to the code")
struct OpenAPITests {
    static func document() throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(CaptureAPI.openAPIDocument)) as? [String: Any])
    }

    @Test("every route the router has is in the document with its method, and nothing else is")
    func routes() async throws {
        let fixture = try await APIFixture()
        let router = CaptureAPI(vault: fixture.vault).buildRouter()
        let inCode = Set(
            router.routes.map { route in
                let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
                return "\(route.method.rawValue.lowercased()) /" + path.joined(separator: "/")
            }
        )
        let paths = try #require(try Self.document()["paths"] as? [String: [String: Any]])
        let documented = Set(paths.flatMap { path, operations in operations.keys.map { "\($0) \(path)" } })
        #expect(inCode.count >= 12)
        #expect(inCode.subtracting(documented).isEmpty, "routes missing from openapi.json: \(inCode.subtracting(documented).sorted())")
        #expect(documented.subtracting(inCode).isEmpty, "documented routes the code lacks: \(documented.subtracting(inCode).sorted())")
    }

    @Test("every error code the code can answer with is in the document's list")
    func errorCodes() throws {
        let components = try #require(try Self.document()["components"] as? [String: Any])
        let schemas = try #require(components["schemas"] as? [String: Any])
        let error = try #require((schemas["Error"] as? [String: Any])?["properties"] as? [String: Any])
        let detail = try #require((error["error"] as? [String: Any])?["properties"] as? [String: Any])
        let documented = Set(try #require((detail["code"] as? [String: Any])?["enum"] as? [String]))

        // The codes, read from the sources: literal codes in the HTTP layer, the vault's and
        // the card validator's code tables.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var inCode = Set<String>()
        let literal = /code: "([a-z_]+)"/
        let table = /case [A-Za-z]+ = "([a-z_]+)"/
        for folder in ["Sources/CaptureServer", "Sources/Tokenizer/Vault"] {
            let files = try FileManager.default.subpathsOfDirectory(atPath: root.appendingPathComponent(folder).path).filter {
                $0.hasSuffix(".swift")
            }
            for file in files {
                let text = try String(contentsOf: root.appendingPathComponent(folder).appendingPathComponent(file), encoding: .utf8)
                inCode.formUnion(text.matches(of: literal).map { String($0.output.1) })
                if file.hasSuffix("VaultError.swift") { inCode.formUnion(text.matches(of: table).map { String($0.output.1) }) }
            }
        }
        let cards = try String(contentsOf: root.appendingPathComponent("Sources/CardCapture/Model/CardValidationError.swift"), encoding: .utf8)
        // incomplete_number and incomplete_expiry are answered as invalid_number and invalid_expiry_month.
        inCode.formUnion(cards.matches(of: table).map { String($0.output.1) }.filter { !$0.hasPrefix("incomplete_") })
        #expect(inCode.count >= 35)
        #expect(inCode.subtracting(documented).isEmpty, "error codes missing from openapi.json: \(inCode.subtracting(documented).sorted())")
    }

    @Test("every card's brand enum names exactly the brands the validator knows")
    func brands() throws {
        func enums(_ value: Any, key: String?) -> [[String]] {
            if let object = value as? [String: Any] {
                var found: [[String]] = []
                if key == "brand", let values = object["enum"] as? [String] { found.append(values) }
                if key == "allowed_brands", let values = (object["items"] as? [String: Any])?["enum"] as? [String] { found.append(values) }
                for (name, inner) in object { found += enums(inner, key: name) }
                return found
            }
            if let array = value as? [Any] { return array.flatMap { enums($0, key: nil) } }
            return []
        }
        let lists = enums(try Self.document(), key: nil)
        #expect(!lists.isEmpty)
        for list in lists { #expect(Set(list) == Set(CardBrand.all.map(\.id)), "\(list)") }
    }

    @Test("every id pattern takes the ids the vault makes of its kind, and no other kind's")
    func idPatterns() throws {
        func patterns(_ value: Any) -> [String] {
            if let object = value as? [String: Any] {
                let own = (object["pattern"] as? String).map { [$0] } ?? []
                return own + object.values.flatMap(patterns)
            }
            return (value as? [Any])?.flatMap(patterns) ?? []
        }
        let kinds: [ObjectID.Kind] = [
            .token, .transaction, .client, .paymentMethod, .scan, .checkoutSession, .webhookEndpoint, .event, .webhookDelivery, .request,
        ]
        let idPatterns = Set(patterns(try Self.document()).filter { $0.hasPrefix("^") && $0.contains("_[0-9A-Za-z]") })
        #expect(idPatterns.count >= kinds.count)
        for pattern in idPatterns {
            let expression = try NSRegularExpression(pattern: pattern)
            func matches(_ id: String) -> Bool {
                expression.firstMatch(in: id, range: NSRange(id.startIndex..., in: id)) != nil
            }
            let own = try #require(kinds.first { pattern.hasPrefix("^" + $0.prefix) }, "\(pattern) names no kind of id")
            for _ in 0..<20 { #expect(matches(ObjectID.random(own).rawValue), "\(pattern)") }
            for other in kinds where other.prefix != own.prefix { #expect(!matches(ObjectID.random(other).rawValue), "\(pattern)") }
        }
    }

    @Test("every JSON request body and form refuses properties it does not list, as the server does")
    func closedBodies() throws {
        let document = try Self.document()
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var checked = 0
        for (path, operations) in paths {
            for (method, operation) in operations {
                let content = ((operation as? [String: Any])?["requestBody"] as? [String: Any])?["content"] as? [String: [String: Any]] ?? [:]
                for (type, media) in content where type == "application/json" || type == "application/x-www-form-urlencoded" {
                    func resolved(_ schema: [String: Any]) -> [String: Any] {
                        guard let reference = schema["$ref"] as? String else { return schema }
                        return schemas[String(reference.split(separator: "/").last ?? "")] ?? [:]
                    }
                    let schema = resolved(media["schema"] as? [String: Any] ?? [:])
                    // A body of exclusive kinds (a card or a scan; a token or a payment method) is
                    // a oneOf of closed objects, which generators read as a union of types.
                    let kinds = (schema["oneOf"] as? [[String: Any]]).map { $0.map(resolved) } ?? [schema]
                    for kind in kinds {
                        #expect(kind["additionalProperties"] as? Bool == false, "\(method) \(path) \(type)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked >= 8)
    }

    @Test("GET /openapi.json serves the document without a key")
    func served() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let (status, body) = try await client.send(.get, "/openapi.json", key: nil)
            #expect(status == .ok)
            let json = try #require(JSONSerialization.jsonObject(with: body) as? [String: Any])
            #expect(json["openapi"] as? String == "3.1.0")
        }
    }
}
