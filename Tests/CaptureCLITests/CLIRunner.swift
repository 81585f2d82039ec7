import Foundation
import Testing

/// Runs the built capture-cli binary and captures what it prints.
struct CLIRunner {
    struct Output {
        let status: Int32
        let stdout: String
        let stderr: String

        var lines: [String] { stdout.split(separator: "\n").map(String.init) }

        /// Line `line` of standard output as a JSON object; a test failure, not a crash, when the
        /// command printed fewer lines.
        func json(line: Int = 0) throws -> [String: Any] {
            let all = lines
            guard line < all.count else {
                Issue.record("the command printed \(all.count) lines, not \(line + 1); its errors: \(stderr)")
                throw CocoaError(.coderValueNotFound)
            }
            let data = Data(all[line].utf8)
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw CocoaError(.coderReadCorrupt)
            }
            return object
        }
    }

    /// The package root, from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The binary beside the test bundle, or `CAPTURE_CLI` when set.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["CAPTURE_CLI"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("capture-cli")
    }

    static func fixture(_ name: String) -> String {
        root.appendingPathComponent("Fixtures/cards/\(name)").path
    }

    /// Runs `body` in a new folder, with the path of a vault database in it (not made yet), and
    /// removes the folder afterwards.
    static func withVaultFolder(_ body: (_ folder: URL, _ database: String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("capture-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder, folder.appendingPathComponent("vault.sqlite").path)
    }

    /// Runs another program (found on the PATH) the same way.
    static func runTool(_ name: String, _ arguments: [String]) throws -> Output {
        try run([name] + arguments, executable: URL(fileURLWithPath: "/usr/bin/env"))
    }

    static func run(_ arguments: [String], input: String? = nil, executable: URL = binary) throws -> Output {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = root
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        // Read both pipes before waiting, so a full pipe cannot block the child.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self)
        )
    }
}
