import Foundation
import Hummingbird
import Logging
import Payments
import Tokenizer

/// Checks `Authorization: Bearer KEY` against the vault: no key or an unknown key is 401.
/// What each key may do is checked by the routes (``APIContext/secretMerchantID()``).
struct AuthMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let vault: Vault

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], let key = Self.bearerKey(header) else { throw APIError.missingKey() }
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

    /// The key of `Bearer KEY` (the scheme in any case, spaces around the key ignored); nil
    /// for any other scheme or an empty key.
    static func bearerKey(_ header: String) -> String? {
        let scheme = "bearer ".utf8
        let bytes = header.utf8
        guard bytes.count > scheme.count, zip(bytes, scheme).allSatisfy({ Self.lowercased($0) == $1 }) else { return nil }
        let key = bytes.dropFirst(scheme.count).drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let end = key.lastIndex { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        guard let end else { return nil }
        return String(Substring(key[...end]))
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
