import Foundation
import Hummingbird
import NIOCore

/// Reading JSON request bodies, with errors that name the parameter at fault.
enum APIBody {
    /// The largest JSON body accepted: far above any real request.
    static let jsonLimit = 64 * 1024

    /// A JSON request's body, whole: 415 when it is declared as anything but JSON (or sent
    /// with no type at all), 413 when it is over ``jsonLimit``.
    static func collectJSON(_ request: Request) async throws -> [UInt8] {
        let declared = request.headers[.contentType]
        if let declared { try requireJSON(declared) }
        let bytes = Array(try await collect(request, limit: jsonLimit).readableBytesView)
        // An empty body with no type is a POST without parameters (a refund of the rest).
        if declared == nil, !bytes.isEmpty { try requireJSON(nil) }
        return bytes
    }

    /// Refuses a `Content-Type` other than `application/json` (a `+json` type is another
    /// format built on JSON, JSON:API's or a merge patch's, not this API's), and a charset
    /// other than UTF-8, which RFC 8259 makes JSON's only one: 415
    /// `unsupported_media_type`, naming what was sent and what to send.
    static func requireJSON(_ contentType: String?) throws {
        let advice = "send the parameters as a JSON object with 'Content-Type: application/json'"
        guard let contentType else {
            throw APIError(.unsupportedMediaType, .invalidRequest, code: "unsupported_media_type", message: "the body has no Content-Type; \(advice)")
        }
        let parts = contentType.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let mediaType = parts[0].lowercased()
        guard mediaType == "application/json" else {
            throw APIError(
                .unsupportedMediaType,
                .invalidRequest,
                code: "unsupported_media_type",
                message: "this route does not take \(shown(parts[0])); \(advice)"
            )
        }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "charset" else { continue }
            let charset = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
            guard charset == "utf-8" || charset == "utf8" || charset == "us-ascii" else {
                throw APIError(
                    .unsupportedMediaType,
                    .invalidRequest,
                    code: "unsupported_media_type",
                    message: "JSON is read as UTF-8 only, not charset=\(shown(pair[1])); "
                        + "send 'Content-Type: application/json' with UTF-8 text (or charset=utf-8)"
                )
            }
        }
    }

    /// A client's header value fit to be quoted in an error: printable ASCII, at most 60
    /// characters.
    static func shown(_ value: String) -> String {
        let printable = value.unicodeScalars.filter { (0x20..<0x7F).contains($0.value) && $0 != "'" }
        let text = String(String.UnicodeScalarView(printable.prefix(60)))
        return text.isEmpty ? "that type" : "'\(text)'"
    }

    /// Decodes a body read whole as `T`: 400 naming `param` when a field is missing or of the
    /// wrong type, 400 `parameter_unknown` for a key `T` does not take, 400 `invalid_json`
    /// when it is not JSON at all.
    static func decode<T: APIParameters>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        guard !bytes.isEmpty else {
            throw APIError(.badRequest, .invalidRequest, code: "invalid_json", message: "the request needs a JSON object body")
        }
        switch StrictJSON.problem(in: bytes, parameters: T.parameters) {
        case .unknownKey(let key)?:
            throw T.parameters.refusal(of: key, in: "this request's body")
        case .duplicateKey(let key)?:
            let shown = String(key.prefix(40))
            throw APIError(
                .badRequest,
                .invalidRequest,
                code: "invalid_json",
                message: "the key \"\(shown)\" is given twice in one object; send each key once",
                param: shown
            )
        case .nullValue(let key)?:
            throw APIError(
                .badRequest,
                .invalidRequest,
                code: "parameter_invalid",
                message: "\(key) is null; give a value, or leave \(key) out",
                param: key
            )
        case .trailingComma?:
            throw APIError(
                .badRequest,
                .invalidRequest,
                code: "invalid_json",
                message: "the body has a comma before a closing } or ], which JSON does not allow; remove it"
            )
        case .nulCharacter?:
            throw APIError(
                .badRequest,
                .invalidRequest,
                code: "invalid_json",
                message: "a string in the body holds a NUL character (\\u0000), which no field accepts; remove it"
            )
        case nil:
            break
        }
        do {
            return try APIJSON.decoder.decode(T.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw describe(error, body: bytes)
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(.badRequest, .invalidRequest, code: "invalid_json", message: "the body is not valid JSON")
        }
    }

    /// The body, or `tooLarge` (413 `body_too_large` unless told) when it is larger than `limit`,
    /// refused from its `Content-Length` before any of it is read when that says so (then
    /// ``BodyDrainMiddleware`` drops the rest before the answer goes). A body sent without a
    /// length is read up to the limit; past it, the rest is read and dropped the same way,
    /// so that the client gets to see the 413.
    static func collect(_ request: Request, limit: Int, tooLarge: APIError? = nil) async throws -> ByteBuffer {
        let refusal =
            tooLarge
            ?? APIError(.contentTooLarge, .invalidRequest, code: "body_too_large", message: "the request body is over \(limit / 1024) KiB")
        if let declared = request.headers[.contentLength].flatMap(declaredLength) {
            guard declared <= limit else { throw refusal }
            // The parser holds the body to its declared length: it cannot run over.
            return try await request.body.collect(upTo: limit)
        }
        var collected = ByteBuffer()
        var chunks = request.body.makeAsyncIterator()
        while let chunk = try await chunks.next() {
            guard collected.readableBytes + chunk.readableBytes <= limit else {
                await BodyDrainMiddleware.discardRest(of: &chunks, alreadyRead: collected.readableBytes + chunk.readableBytes)
                throw refusal
            }
            collected.writeImmutableBuffer(chunk)
        }
        return collected
    }

    /// A Content-Length's value: digits past `Int.max` (2^63 and up) are a length over any
    /// limit, refused at once rather than read as a body of unknown length.
    static func declaredLength(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text) ?? Int.max
    }

    static func describe(_ error: DecodingError, body: [UInt8]) -> APIError {
        func name(_ path: [any CodingKey]) -> String? {
            path.isEmpty ? nil : parameterName(path.map { $0.intValue.map(Path.index) ?? .key($0.stringValue) })
        }
        switch error {
        case .keyNotFound(let key, let context):
            let param = name(context.codingPath + [key]) ?? key.stringValue
            return APIError(.badRequest, .invalidRequest, code: "parameter_missing", message: "\(param) is required", param: param)
        case .typeMismatch(let expected, let context), .valueNotFound(let expected, let context):
            let param = name(context.codingPath)
            return APIError(
                .badRequest,
                .invalidRequest,
                code: "parameter_invalid",
                message: "\(param ?? "the body") must be \(describe(expected))",
                param: param
            )
        case .dataCorrupted(let context):
            if let param = name(context.codingPath) {
                return APIError(.badRequest, .invalidRequest, code: "parameter_invalid", message: "\(param) is not valid", param: param)
            }
            // The decoder says a number that no integer holds (1.5, 2^63) is not JSON, and
            // names no field: find it, as every number the API takes is a whole one.
            if let param = firstFractionalNumber(in: body) {
                return APIError(
                    .badRequest,
                    .invalidRequest,
                    code: "parameter_invalid",
                    message: "\(param) must be a whole number (no fraction, at most 64 bits)",
                    param: param
                )
            }
            return APIError(.badRequest, .invalidRequest, code: "invalid_json", message: "the body is not valid JSON")
        @unknown default:
            return APIError(.badRequest, .invalidRequest, code: "invalid_json", message: "the body could not be read")
        }
    }

    /// A step into a JSON value: an object's key or an array's index.
    enum Path {
        case key(String)
        case index(Int)
    }

    /// `items[0].amount`, as the API names a parameter.
    static func parameterName(_ path: [Path]) -> String {
        var name = ""
        for step in path {
            switch step {
            case .key(let key): name += name.isEmpty ? key : ".\(key)"
            case .index(let index): name += "[\(index)]"
            }
        }
        return name
    }

    /// Where the body, when it is JSON, holds a number with a fraction or past 64 bits (keys
    /// in order, so that the answer does not change between runs).
    static func firstFractionalNumber(in body: [UInt8]) -> String? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) else { return nil }
        func search(_ value: Any, _ path: [Path]) -> [Path]? {
            switch value {
            case let object as [String: Any]:
                for key in object.keys.sorted() {
                    if let found = search(object[key]!, path + [.key(key)]) { return found }
                }
                return nil
            case let array as [Any]:
                for (index, element) in array.enumerated() {
                    if let found = search(element, path + [.index(index)]) { return found }
                }
                return nil
            case let number as NSNumber:
                // Bridged only when exact: nil for 1.5 and for 2^63; true is 1.
                return (number as? Int) == nil ? path : nil
            default:
                return nil
            }
        }
        return search(value, []).map(parameterName)
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type: "an integer"
        case is Bool.Type: "true or false"
        case is [String: Any].Type: "an object"
        case is [Any].Type: "a list"
        default: "of another type"
        }
    }
}
