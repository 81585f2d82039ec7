import CardCapture
import Foundation
import Hummingbird
import Tokenizer

/// `POST /v1/tokens` and `GET /v1/tokens/{id}`.
struct TokenRoutes {
    let vault: Vault

    func add(to group: RouterGroup<APIContext>) {
        group.post("tokens", use: create)
        group.get("tokens/:id", use: read)
    }

    struct CreateBody: Decodable {
        let number: String
        let expMonth: Int
        let expYear: Int
        let cvc: String?
        let holder: String?
        let amount: Int?
        let currency: String?

        enum CodingKeys: String, CodingKey {
            case number, cvc, holder, amount, currency
            case expMonth = "exp_month"
            case expYear = "exp_year"
        }
    }

    struct TokenBody: ResponseEncodable {
        let id: String
        let object = "token"
        let card: CardSummary
        let amount: Int?
        let currency: String?
        let createdAt: Date
        let expiresAt: Date
        let used: Bool

        init(_ token: Token) {
            self.id = token.id
            self.card = token.card
            self.amount = token.amount
            self.currency = token.currency
            self.createdAt = token.createdAt
            self.expiresAt = token.expiresAt
            self.used = token.used
        }

        enum CodingKeys: String, CodingKey {
            case id, object, card, amount, currency, used
            case createdAt = "created_at"
            case expiresAt = "expires_at"
        }
    }

    @Sendable func create(_ request: Request, context: APIContext) async throws -> EditedResponse<TokenBody> {
        let merchantID = try context.merchantID()
        let body = try await APIBody.decode(CreateBody.self, from: request)
        let card = CardInput(number: body.number, expMonth: body.expMonth, expYear: body.expYear, cvc: body.cvc, holder: body.holder)
        return try await APIError.mapping {
            let token = try await vault.createToken(for: merchantID, card: card, amount: body.amount, currency: body.currency)
            return EditedResponse(status: .created, response: TokenBody(token))
        }
    }

    @Sendable func read(_ request: Request, context: APIContext) async throws -> TokenBody {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        return try await APIError.mapping { TokenBody(try await vault.token(id, merchantID: merchantID)) }
    }
}
