import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The command line: scan cards, validate card data and, later, tokenize and charge.
@main
struct CaptureCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture-cli",
        abstract: "Read payment cards off images, validate them and exchange them for tokens.",
        version: "0.1.0",
        subcommands: [
            ScanCommand.self, EnterCommand.self, ValidateCommand.self, TokenizeCommand.self, ChargeCommand.self, CheckoutCommand.self,
            ChargeURLCommand.self, WebhooksCommand.self, ServeCommand.self,
            KeysCommand.self, MigrateCommand.self,
            BenchCommand.self, LogBenchCommand.self, SoakCommand.self,
        ]
    )

    /// Runs the command, mapping usage errors to exit status 2 as the contract says
    /// (ArgumentParser's own default is 64).
    static func main() async {
        limitOpenMPThreads()
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

    /// Tesseract runs parts of its recogniser on OpenMP threads, which on a small machine
    /// only spin against each other and against our own workers: measured on the fixtures
    /// on 2 cores, one thread per engine halves the time per image (1217 ms to 559 ms median)
    /// and removes nearly all system time. libgomp reads `OMP_THREAD_LIMIT` when it loads,
    /// before `main`, so when the variable is unset we set it and start again once.
    static func limitOpenMPThreads() {
        guard getenv("OMP_THREAD_LIMIT") == nil else { return }
        setenv("OMP_THREAD_LIMIT", "1", 1)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        // execv returns only on failure: carry on with OpenMP's defaults.
    }
}
