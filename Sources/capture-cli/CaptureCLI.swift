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
}
