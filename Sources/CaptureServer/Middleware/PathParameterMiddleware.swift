import Foundation
import Hummingbird

/// Refuses an id in the path that openapi.json's pattern for it does not take (400
/// `parameter_invalid`, naming the parameter), as the document's rule is for every request it
/// does not allow: `GET /v1/transactions/tok_…` is a mistake in the request, not an object that
/// is not there (404). The patterns are read from the document itself, so the two cannot part.
struct PathParameterMiddleware: RouterMiddleware {
    typealias Context = APIContext

    /// A path parameter and the expression its values must match.
    struct Rule: @unchecked Sendable {  // NSRegularExpression is immutable and thread-safe.
        let name: String
        let pattern: String
        let expression: NSRegularExpression

        func admits(_ value: String) -> Bool {
            expression.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil
        }
    }

    /// The rules of each operation, by "METHOD /template" (a HEAD checked as its GET).
    static let rules: [String: [Rule]] = Self.rules(of: CaptureAPI.openAPIDocument)

    static func rules(of document: [UInt8]) -> [String: [Rule]] {
        guard let root = try? JSONSerialization.jsonObject(with: Data(document)) as? [String: Any],
            let paths = root["paths"] as? [String: [String: Any]]
        else { preconditionFailure("openapi.json in the bundle is not a document with paths") }
        var table: [String: [Rule]] = [:]
        for (path, item) in paths {
            let shared = item["parameters"] as? [[String: Any]] ?? []
            for (method, operation) in item {
                guard let operation = operation as? [String: Any] else { continue }
                let parameters = shared + (operation["parameters"] as? [[String: Any]] ?? [])
                let rules: [Rule] = parameters.compactMap { parameter in
                    guard parameter["in"] as? String == "path", let name = parameter["name"] as? String,
                        let pattern = (parameter["schema"] as? [String: Any])?["pattern"] as? String,
                        let expression = try? NSRegularExpression(pattern: pattern)
                    else { return nil }
                    return Rule(name: name, pattern: pattern, expression: expression)
                }
                if !rules.isEmpty { table["\(method.uppercased()) \(path)"] = rules }
            }
        }
        return table
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let method = request.method == .head ? "GET" : request.method.rawValue
        guard let path = context.endpointPath, let rules = Self.rules["\(method) \(path)"] else { return try await next(request, context) }
        for rule in rules {
            guard let value = context.parameters.get(rule.name), !rule.admits(value) else { continue }
            throw APIError(
                .badRequest,
                .invalidRequest,
                code: "parameter_invalid",
                message: "\(rule.name) is not an id of the kind this route takes (\(rule.pattern)); check which id you sent",
                param: rule.name
            )
        }
        return try await next(request, context)
    }
}
