#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes values as one line of JSON each, for scripts.
enum JSONLine {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        // Sorted keys: the same object always prints the same way, whatever the platform.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else {
            // Our own Encodable types cannot fail to encode; this is a programming error.
            preconditionFailure("cannot encode \(type(of: value)) as JSON")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// `{"code": …, "message": …}`, the error object of the JSON outputs.
struct ErrorJSON: Encodable {
    let code: String
    let message: String
}
