import HTTPTypes
import Hummingbird
import Synchronization

/// A known path asked with a method it does not take is 405 `method_not_allowed` with `Allow`
/// naming the methods it does take, not 404 `route_not_found`, as HTTP clients expect. (`HEAD`
/// is answered wherever `GET` is by the router itself: ``CaptureAPI/buildRouter()``.)
struct MethodMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let routes: KnownRoutes

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = routes.methods(for: request.uri.path)
            guard !allowed.isEmpty else { throw error }
            var refusal = APIError(
                .methodNotAllowed,
                .invalidRequest,
                code: "method_not_allowed",
                message:
                    "\(request.uri.path.prefix(200)) does not take \(request.method.rawValue.prefix(20)); it takes \(allowed.joined(separator: ", "))"
            )
            refusal.allow = allowed.joined(separator: ", ")
            throw refusal
        }
    }
}

/// The router's paths and the methods each takes, read once the routes are added, for
/// ``MethodMiddleware``.
final class KnownRoutes: Sendable {
    private struct Route {
        let segments: [Substring]
        var methods: Set<String>
    }
    private let table = Mutex<[Route]>([])

    /// Reads the routes `router` has now (call after adding them all); a path that takes GET
    /// takes HEAD too.
    func learn(_ router: Router<APIContext>) {
        var routes: [String: Route] = [:]
        for route in router.routes {
            let path = route.path.description
            var entry = routes[path] ?? Route(segments: path.split(separator: "/"), methods: [])
            entry.methods.insert(route.method.rawValue)
            if route.method == .get { entry.methods.insert(HTTPRequest.Method.head.rawValue) }
            routes[path] = entry
        }
        table.withLock { $0 = Array(routes.values) }
    }

    /// The methods the route matching `path` takes, sorted; empty when no route has that path.
    func methods(for path: String) -> [String] {
        let parts = path.split(separator: "/")
        let methods = table.withLock { routes in
            routes.filter { route in
                route.segments.count == parts.count
                    && zip(route.segments, parts).allSatisfy { pattern, part in pattern.hasPrefix("{") || pattern == part }
            }
            .reduce(into: Set<String>()) { $0.formUnion($1.methods) }
        }
        return methods.sorted()
    }
}
