import Foundation
import Hummingbird
import Logging
import Tokenizer

/// Checks `Authorization: Bearer KEY` against the vault: no key or an unknown key is 401.
/// What each key may do is checked by the routes (``APIContext/secretMerchantID()``).
struct AuthMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let vault: Vault

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else { throw APIError.missingKey() }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw APIError.missingKey() }
        let key = String(parts[1]).trimmingCharacters(in: .whitespaces)
        let record: APIKeyRecord?
        do {
            record = try await vault.authenticate(apiKey: key)
        } catch {
            throw APIError(error)
        }
        guard let record else { throw APIError.invalidKey() }
        var context = context
        context.apiKey = record
        context.notes.merchantID = record.merchantID
        return try await next(request, context)
    }
}
