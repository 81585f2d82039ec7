import CardCapture
// Process lives in full Foundation only.
import Foundation

/// The plain route the scanner is measured against: the `tesseract` command on the whole
/// image, a regular expression for digit runs, and the Luhn check.
enum PlainRoute {
    struct Reading {
        var pan: String?
        var expiry: (month: Int, year: Int)?
        var milliseconds: Double
    }

    static let executable = "/usr/bin/tesseract"

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    static func read(_ path: String) throws -> Reading {
        let start = ContinuousClock.now
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [path, "stdout"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let milliseconds = (ContinuousClock.now - start).seconds * 1000
        // The first run of 13 to 19 digits (spaces and dashes allowed between) that passes Luhn.
        var pan: String?
        for match in text.matches(of: /[0-9](?:[ -]?[0-9]){12,18}/) {
            let digits = String(text[match.range].filter { (character: Character) in character.isNumber })
            if PAN.luhnValid(digits) {
                pan = digits
                break
            }
        }
        let expiry = ExpiryFinder.expiry(in: [text]).map { (month: $0.month, year: $0.year) }
        return Reading(pan: pan, expiry: expiry, milliseconds: milliseconds)
    }
}
