import Foundation
import Testing

@testable import Payments
@testable import Tokenizer

@Suite("Object ids")
struct ObjectIDTests {
    /// A generator that gives one number again and again: the random part at its extremes.
    struct Fixed: RandomNumberGenerator {
        var value: UInt64
        mutating func next() -> UInt64 { value }
    }

    @Test("tok_ plus 8 base-62 digits of time and 22 of chance, never digits only; keys are chance only")
    func shape() {
        for _ in 0..<1000 {
            let id = ObjectID.random(.token)
            #expect(id.rawValue.hasPrefix("tok_"))
            let body = id.rawValue.dropFirst(4)
            #expect(body.count == 30)
            #expect(body.dropFirst(8).contains { $0.isLetter })
            #expect(ObjectID(id.rawValue, kind: .token) == id)
            let key = ObjectID.random(.secretKey)
            #expect(key.rawValue.dropFirst(3).count == 22)
            #expect(ObjectID(key.rawValue, kind: .secretKey) == key)
        }
    }

    @Test("ids of stored records sort by the millisecond they were made, whatever their random part")
    func timeOrder() {
        var high = Fixed(value: .max)
        var low = Fixed(value: 0)
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        var previous = ObjectID.random(.token, at: start, using: &high).rawValue
        let steps: [TimeInterval] = [0.001, 0.002, 1, 3600, 86_400 * 365, 86_400 * 365 * 1000]
        for step in steps {
            let next = ObjectID.random(.token, at: start.addingTimeInterval(step), using: &low).rawValue
            #expect(previous < next, "\(previous) should sort before \(next)")
            previous = next
        }
        #expect(ObjectID.random(.token, at: Date(timeIntervalSince1970: 0), using: &low).rawValue.hasPrefix("tok_00000000"))
    }

    @Test("the bound after a moment is above every id made by then and below every id made later")
    func timeBound() {
        var high = Fixed(value: .max)
        var low = Fixed(value: 0)
        let moment = Date(timeIntervalSince1970: 1_795_000_000.1234)
        let bound = ObjectID.bound(.token, after: moment)
        for earlier in [moment, moment.addingTimeInterval(-0.0003), moment.addingTimeInterval(-86_400)] {
            #expect(ObjectID.random(.token, at: earlier, using: &high).rawValue < bound)
        }
        for later in [moment.addingTimeInterval(0.001), moment.addingTimeInterval(86_400)] {
            #expect(ObjectID.random(.token, at: later, using: &low).rawValue > bound)
        }
    }

    @Test("ids do not repeat")
    func unique() {
        let ids = Set((0..<10_000).map { _ in ObjectID.random(.token).rawValue })
        #expect(ids.count == 10_000)
    }

    @Test("all 128 bits reach the text: the largest and smallest inputs differ in every position class")
    func fullRange() {
        var zeros = Fixed(value: 0)
        var ones = Fixed(value: .max)
        let low = ObjectID.random(.request, at: Date(), using: &zeros).rawValue
        let high = ObjectID.random(.request, at: Date(), using: &ones).rawValue
        // 2^128 - 1 in base 62 is 7n42DGM5Tflk9n8mt7Fhc7.
        #expect(high == "req_7n42DGM5Tflk9n8mt7Fhc7")
        // Zero is all digits, so its first character becomes a letter.
        #expect(low == "req_A000000000000000000000")
    }

    @Test("parsing refuses other kinds and malformed bodies")
    func parsing() {
        let id = ObjectID.random(.transaction)
        #expect(ObjectID(id.rawValue, kind: .token) == nil)
        #expect(ObjectID("tok_short", kind: .token) == nil)
        #expect(ObjectID("tok_" + String(repeating: "!", count: 30), kind: .token) == nil)
        // A token's body without its time part.
        #expect(ObjectID("tok_" + String(repeating: "a", count: 22), kind: .token) == nil)
    }
}
