import CardCapture
import Testing

@Suite("Manual entry: typing one answer")
struct EntryLineTests {
    func line(for field: ManualEntry.Field?, after answers: [String] = []) throws -> EntryLine {
        var entry = ManualEntry(clock: .fixed(CalendarDate(year: 2026, month: 11, day: 22)))
        for answer in answers { _ = entry.answer(answer) }
        let prompt = try #require(entry.prompt)
        #expect(prompt.field == field)
        return EntryLine(prompt: prompt)
    }

    func type(_ text: String, into line: inout EntryLine) -> [EntryLine.Action] {
        text.map { line.press(.character($0)) }
    }

    @Test(
        "the number is shown grouped as its brand prints it, the brand named as soon as it is known",
        arguments: [
            ("4242424242424242", "4242 4242 4242 4242", "Visa"),
            ("378282246310005", "3782 822463 10005", "American Express"),
            ("36227206271667", "3622 720627 1667", "Diners Club"),
            ("5555", "5555", "Mastercard"),
            ("37828", "3782 8", "American Express"),
            ("4242424242424242424", "4242 4242 4242 4242 424", "Visa"),
        ]
    )
    func grouping(digits: String, shown: String, brand: String) throws {
        var line = try line(for: .number)
        #expect(type(digits, into: &line).allSatisfy { $0 == .edited })
        #expect(line.shown == shown)
        #expect(line.note == brand)
        #expect(line.text == digits)
    }

    @Test("no brand until the digits tell it; a prefix no brand issues says so")
    func brandNote() throws {
        var line = try line(for: .number)
        #expect(line.note == nil)
        _ = line.press(.character("5"))
        #expect(line.note == "Mastercard, Verve, Maestro or 2 more?")
        _ = line.press(.character("1"))
        #expect(line.note == "Mastercard")
        _ = line.press(.backspace)
        _ = line.press(.backspace)
        _ = type("99", into: &line)
        #expect(line.note == "no card brand starts this way")
    }

    @Test("the number takes digits only, and no more than its brand's longest number; spaces and dashes are left out")
    func numberKeys() throws {
        var line = try line(for: .number)
        #expect(line.press(.character("a")) == .refused)
        #expect(line.press(.backspace) == .refused)
        _ = type("3782-8224 6310005", into: &line)
        #expect(line.text == "378282246310005")
        #expect(line.press(.character("1")) == .refused)  // an Amex number has 15 digits
        #expect(line.press(.backspace) == .edited)
        #expect(line.text == "37828224631000")
        #expect(line.press(.clear) == .edited)
        #expect(line.text.isEmpty && line.shown.isEmpty)
        _ = type("4242424242424242424", into: &line)
        #expect(line.press(.character("2")) == .refused)  // 19 digits at most
        #expect(line.press(.enter) == .submit("4242424242424242424"))
    }

    @Test("the expiry puts in its own slash; a slash after one digit makes the month two")
    func expiryKeys() throws {
        var line = try line(for: .expiry, after: ["4242424242424242"])
        _ = type("1230", into: &line)
        #expect(line.shown == "12/30")
        var short = try self.line(for: .expiry, after: ["4242424242424242"])
        _ = type("3/", into: &short)
        #expect(short.shown == "03/")
        #expect(short.press(.character("/")) == .refused)
        _ = type("2027", into: &short)
        #expect(short.shown == "03/2027")
        #expect(short.press(.character("1")) == .refused)  // seven characters at most
        #expect(short.press(.character("x")) == .refused)
        #expect(short.press(.enter) == .submit("03/2027"))
    }

    @Test("the security code shows nothing and takes no more digits than its brand's code has")
    func cvcKeys() throws {
        var visa = try line(for: .cvc, after: ["4242424242424242", "12/30"])
        #expect(type("1234", into: &visa) == [.edited, .edited, .edited, .refused])
        #expect(visa.shown.isEmpty)
        #expect(visa.press(.character("a")) == .refused)
        #expect(visa.press(.enter) == .submit("123"))
        var amex = try line(for: .cvc, after: ["378282246310005", "12/30"])
        #expect(type("1234", into: &amex) == [.edited, .edited, .edited, .edited])
        #expect(amex.shown.isEmpty)
    }

    @Test("the name takes letters, spaces and ' - . up to 26 characters, no leading space")
    func holderKeys() throws {
        var line = try line(for: .holder, after: ["4242424242424242", "12/30", "123"])
        #expect(line.press(.character(" ")) == .refused)
        #expect(line.press(.character("7")) == .refused)
        _ = type("Zoë O'Brien-Smith", into: &line)
        #expect(line.shown == "Zoë O'Brien-Smith")
        _ = type(String(repeating: "x", count: 20), into: &line)
        #expect(line.text.count == 26)
    }

    @Test("Ctrl-C and Ctrl-D cancel, on any field")
    func cancelKeys() throws {
        var line = try line(for: .number)
        _ = type("4242", into: &line)
        #expect(line.press(.interrupt) == .cancel)
        #expect(line.press(.endOfInput) == .cancel)
        var confirm = try self.line(for: nil, after: ["4242424242424242", "12/30", "123", ""])
        #expect(confirm.press(.character("1")) == .refused)
        #expect(confirm.press(.character("y")) == .edited)
        #expect(confirm.press(.endOfInput) == .cancel)
    }
}
