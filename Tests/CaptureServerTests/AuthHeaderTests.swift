import Testing

@testable import CaptureServer

@Suite("Authorization header")
struct AuthHeaderTests {
    @Test(
        "the key of a Bearer header, the scheme in any case and spaces around the key ignored",
        arguments: [
            ("Bearer pk_abc", "pk_abc"),
            ("bearer sk_abc", "sk_abc"),
            ("BEARER   pk_abc \t", "pk_abc"),
            ("Bearer pk_a b", "pk_a b"),
        ]
    )
    func keys(header: String, key: String) {
        #expect(AuthMiddleware.bearerKey(header) == key)
    }

    @Test(
        "no key from another scheme, a missing key or a bare scheme",
        arguments: ["Basic cGs6", "Bearer", "Bearer ", "Bearer  \t ", "Bearerpk_abc", "pk_abc", ""]
    )
    func noKey(header: String) {
        #expect(AuthMiddleware.bearerKey(header) == nil)
    }
}
