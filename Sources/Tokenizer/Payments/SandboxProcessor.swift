import CardCapture

/// A processor for development and tests: outcomes follow the well-known test numbers, and
/// every other valid card succeeds. No money moves.
///
/// | number | outcome |
/// |---|---|
/// | 4000 0000 0000 0002 | declined, card_declined |
/// | 4000 0000 0000 9995 | declined, insufficient_funds |
/// | 4000 0000 0000 0069 | declined, expired_card |
/// | 4000 0000 0000 0127 | declined, incorrect_cvc |
/// | 4000 0000 0000 0119 | failed, processing_error |
public struct SandboxProcessor: Processor {
    public init() {}

    static let outcomes: [String: AuthorizationOutcome] = [
        "4000000000000002": .declined(code: "card_declined"),
        "4000000000009995": .declined(code: "insufficient_funds"),
        "4000000000000069": .declined(code: "expired_card"),
        "4000000000000127": .declined(code: "incorrect_cvc"),
        "4000000000000119": .failed(code: "processing_error"),
    ]

    public func authorize(_ request: AuthorizationRequest) async throws -> AuthorizationOutcome {
        Self.outcomes[request.pan.revealed] ?? .succeeded(reference: "sandbox_" + ObjectID.random(.transaction).rawValue.dropFirst(5))
    }

    public func refund(reference: String, amount: Int, currency: Currency) async throws {}
}
