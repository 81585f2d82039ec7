import Testing

@testable import Tokenizer

@Suite("Object ids")
struct ObjectIDTests {
    @Test("tok_ plus 22 base-62 characters, never digits only")
    func shape() {
        for _ in 0..<1000 {
            let id = ObjectID.random(.token)
            #expect(id.rawValue.hasPrefix("tok_"))
            let body = id.rawValue.dropFirst(4)
            #expect(body.count == 22)
            #expect(body.contains { $0.isLetter })
            #expect(ObjectID(id.rawValue, kind: .token) == id)
        }
    }

    @Test("ids do not repeat")
    func unique() {
        let ids = Set((0..<10_000).map { _ in ObjectID.random(.token).rawValue })
        #expect(ids.count == 10_000)
    }

    @Test("all 128 bits reach the text: the largest and smallest inputs differ in every position class")
    func fullRange() {
        struct Fixed: RandomNumberGenerator {
            var value: UInt64
            mutating func next() -> UInt64 { value }
        }
        var zeros = Fixed(value: 0)
        var ones = Fixed(value: .max)
        let low = ObjectID.random(.token, using: &zeros).rawValue
        let high = ObjectID.random(.token, using: &ones).rawValue
        // 2^128 - 1 in base 62 is 7n42DGM5Tflk9n8mt7Fhc7.
        #expect(high == "tok_7n42DGM5Tflk9n8mt7Fhc7")
        // Zero is all digits, so its first character becomes a letter.
        #expect(low == "tok_A000000000000000000000")
    }

    @Test("parsing refuses other kinds and malformed bodies")
    func parsing() {
        let id = ObjectID.random(.transaction)
        #expect(ObjectID(id.rawValue, kind: .token) == nil)
        #expect(ObjectID("tok_short", kind: .token) == nil)
        #expect(ObjectID("tok_" + String(repeating: "!", count: 22), kind: .token) == nil)
    }
}
