import HTTPTypes
import Hummingbird

/// Tells browsers to reach this server over https only, for a year (HSTS), on every answer,
/// errors included: added when the server's public address is https (`serve --public-url
/// https://…`, usually TLS ended by a proxy in front). Browsers ignore it over plain http.
struct StrictTransportMiddleware: RouterMiddleware {
    typealias Context = APIContext

    static let header = HTTPField.Name("Strict-Transport-Security")!
    static let value = "max-age=31536000"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[Self.header] = Self.value
        return response
    }
}
