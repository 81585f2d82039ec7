import Testing

@testable import CaptureServer

/// The duplicate-key and NUL check on its own: keys kept in place while an object has few,
/// in a set past that or once one is escaped, with the same answers either way.
@Suite("Strict JSON")
struct StrictJSONTests {
    static func check(_ json: String) -> StrictJSON.Problem? {
        StrictJSON.problem(in: Array(json.utf8))
    }

    /// An object of `count` keys k0, k1, …, the last one named `last` instead.
    static func object(keys count: Int, last: String) -> String {
        "{" + ((0..<(count - 1)).map { "\"k\($0)\": \($0)" } + ["\"\(last)\": 0"]).joined(separator: ", ") + "}"
    }

    @Test("a repeated key is found among few keys and among many, plainly written or escaped")
    func duplicates() {
        #expect(Self.check(#"{"a": 1, "b": 2, "a": 3}"#) == .duplicateKey("a"))
        #expect(Self.check(#"{"a": 1, "b": 2, "\u0061": 3}"#) == .duplicateKey("a"))
        #expect(Self.check(#"{"\u0061": 1, "b": 2, "a": 3}"#) == .duplicateKey("a"))
        for count in [15, 16, 17, 40, 3_000] {
            #expect(Self.check(Self.object(keys: count, last: "k1")) == .duplicateKey("k1"), "\(count) keys")
            #expect(Self.check(Self.object(keys: count, last: "\\u006b1")) == .duplicateKey("k1"), "\(count) keys")
            #expect(Self.check(Self.object(keys: count, last: "new")) == nil, "\(count) keys")
        }
    }

    @Test("keys count per object: a child may reuse its parent's keys, and a parent's keys are still checked after a child")
    func nesting() {
        #expect(Self.check(#"{"a": {"a": 1, "b": {"a": 2}}, "b": [{"a": 1}, {"a": 2}]}"#) == nil)
        #expect(Self.check(#"{"a": {"x": 1, "y": 2}, "b": 2, "a": 3}"#) == .duplicateKey("a"))
        #expect(Self.check(#"{"a": 1, "c": {"x": 1, "x": 2}}"#) == .duplicateKey("x"))
        let wide = Self.object(keys: 40, last: "last")
        #expect(Self.check("{\"p\": \(wide), \"q\": \(wide), \"p\": 1}") == .duplicateKey("p"))
        #expect(Self.check("{\"p\": \(wide), \"q\": [\(wide), \(wide)]}") == nil)
    }

    @Test("strings are skipped whole: braces, quotes and colons inside them are not structure; a NUL in one is refused")
    func strings() {
        #expect(Self.check(#"{"a": "{\"a\": 1}", "b": "a\", \"a"}"#) == nil)
        #expect(Self.check(#"{"a": "x\u0000y"}"#) == .nulCharacter)
        #expect(Self.check(#"{"a": 1, "b": "#) == nil)
    }

    @Test("a comma before an object's or array's end is refused, with white space between or not; commas in strings are text")
    func trailingCommas() {
        #expect(Self.check(#"{"a": 1,}"#) == .trailingComma)
        #expect(Self.check("{\"a\": [1, 2, \n\t ], \"b\": 2}") == .trailingComma)
        #expect(Self.check(#"{"a": {"b": 1 , } }"#) == .trailingComma)
        #expect(Self.check(#"{"a": "x,}", "b": [",]"]}"#) == nil)
        #expect(Self.check(#"{"a": [1, 2], "b": {"c": 3}}"#) == nil)
    }

    @Test("null is refused for a top-level key the request does not call nullable, and only there")
    func nulls() {
        let parameters = KnownParameters(["email", "events", "metadata"], nullable: ["events"])
        func check(_ json: String) -> StrictJSON.Problem? { StrictJSON.problem(in: Array(json.utf8), parameters: parameters) }
        #expect(check(#"{"email": null}"#) == .nullValue("email"))
        #expect(check(#"{"events": ["*"], "email" :null}"#) == .nullValue("email"))
        #expect(check(#"{"events": null, "email": "pat@example.com"}"#) == nil)
        // Inside an object or a list, null is the decoder's to refuse or take; a string "null" is a string.
        #expect(check(#"{"metadata": {"order": null}, "email": "null"}"#) == nil)
        #expect(check(#"{"metadata": [null]}"#) == nil)
        // Not the literal null: left to the decoder, which says it is not JSON.
        #expect(check(#"{"email": Infinity}"#) == nil)
        // Without the request's parameters nothing is said of null.
        #expect(Self.check(#"{"email": null}"#) == nil)
    }
}
