import Tokenizer
/// The limits openapi.json states for free text, counted as JSON Schema counts a string's
/// length: in Unicode code points, where `String.count` counts what a reader sees as one
/// character (an "é" written as e and a combining accent is two code points and one
/// character). The document and the server then refuse exactly the same strings.
package enum TextRules {
    /// A description's limit, for clients, charges and checkout sessions.
    static let descriptionLimit = 500

    /// The length of `text` in Unicode code points.
    package static func length(_ text: some StringProtocol) -> Int {
        text.unicodeScalars.count
    }

    /// Refuses a description over ``descriptionLimit`` code points.
    static func checkDescription(_ description: String?) throws(VaultError) {
        if let description, length(description) > descriptionLimit {
            throw VaultError(.invalidRequest, "description is limited to \(descriptionLimit) characters", param: "description")
        }
    }

    /// An e-mail address as openapi.json's pattern has it: at most 254 code points, one `@`
    /// with something on either side, and no space or control character. Whether the address
    /// receives mail is not a question a vault can answer.
    static func isEmailAddress(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count <= 254, let at = scalars.firstIndex(of: "@"), at > 0, at < scalars.count - 1 else { return false }
        return scalars.enumerated().allSatisfy { index, scalar in
            (scalar != "@" || index == at) && scalar.value > 0x20 && scalar.value != 0x7F
        }
    }
}
