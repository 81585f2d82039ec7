import Foundation
import Hummingbird
import HummingbirdCore

/// Refuses a query parameter the route does not take (400 `parameter_unknown`, with the nearest
/// name when one is one or two edits away): `GET /v1/transactions?limt=5` would otherwise list
/// a hundred, and the client would believe it asked for five. A parameter given twice is 400
/// `parameter_invalid`: `?limit=5&limit=100` has no one meaning.
struct QueryParameterMiddleware: RouterMiddleware {
    typealias Context = APIContext

    /// The query parameters each route takes, by method and template; a route not here takes
    /// none (every POST, every read of one object).
    static let routes: [String: KnownParameters] = {
        let paging = ["limit", "starting_after"]
        let table: [String: [String]] = [
            "GET /v1/transactions": paging + ["client"],
            "GET /v1/clients/{id}/payment_methods": paging,
            "GET /v1/checkout_sessions": paging,
            "GET /v1/webhook_endpoints/{id}/deliveries": paging,
            "GET /v1/events": paging + ["type", "created", "created[gte]", "created[gt]", "created[lte]", "created[lt]"],
        ]
        return table.mapValues { KnownParameters($0) }
    }()

    static let none = KnownParameters([])

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.query != nil else { return try await next(request, context) }
        let method = request.method == .head ? "GET" : request.method.rawValue
        let route = "\(method) \(context.endpointPath ?? request.uri.path)"
        let known = Self.routes[route] ?? Self.none
        var seen: Set<Substring> = []
        for (name, _) in request.uri.decodedQueryParameters {
            guard known.contains(String(name)) else { throw known.refusal(of: String(name), in: route) }
            // Given twice, which one counts is the reader's guess (a proxy may read the other).
            guard seen.insert(name).inserted else {
                let shown = String(name.prefix(40))
                throw APIError(
                    .badRequest,
                    .invalidRequest,
                    code: "parameter_invalid",
                    message: "the query parameter \(shown) is given more than once; give it once",
                    param: shown
                )
            }
        }
        return try await next(request, context)
    }
}

extension URI {
    /// The query's parameters with their names percent-decoded, as the routes and the check
    /// above read them: Hummingbird decodes values but leaves names as sent, and a client's
    /// library writes `created[gte]` as `created%5Bgte%5D`.
    var decodedQueryParameters: Parameters {
        Parameters(queryParameters.map { name, value in (name.removingPercentEncoding.map { $0[...] } ?? name, value) })
    }
}
