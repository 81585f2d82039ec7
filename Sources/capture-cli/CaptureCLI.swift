import ArgumentParser

/// The command line: scan cards, validate card data and, later, tokenize and charge.
@main
struct CaptureCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture-cli",
        abstract: "Read payment cards off images, validate them and exchange them for tokens.",
        version: "0.1.0",
        subcommands: [ScanCommand.self, ValidateCommand.self]
    )

    /// Runs the command, mapping usage errors to exit status 2 as the contract says
    /// (ArgumentParser's own default is 64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                Terminal.writeError(fullMessage(for: error))
                Self.exit(withError: ExitCode(2))
            }
            Self.exit(withError: error)
        }
    }
}
