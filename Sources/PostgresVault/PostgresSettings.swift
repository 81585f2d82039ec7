public import Foundation
import PostgresNIO

/// Where a PostgreSQL vault is and how to reach it, read from a
/// `postgres://user[:password]@host[:port]/database[?sslmode=…]` URL (libpq's form). A host
/// that is a folder (`?host=/run/postgresql`, as libpq writes it) is a server on this machine,
/// reached through its Unix socket in that folder; there, as with libpq, `sslmode` does not
/// apply (the socket never leaves the machine, and PostgreSQL offers no TLS on it).
///
/// The password may come from the URL, `PGPASSWORD`, or a file (`--database-password-file`);
/// it is never printed: ``description`` shows the URL without it.
///
/// ```swift
/// let settings = try PostgresSettings(url: "postgres://capture@db.internal/vault?sslmode=verify-full")
/// ```
public struct PostgresSettings: Sendable, CustomStringConvertible {
    /// A host name or address; or, starting with `/`, the folder of the server's Unix socket.
    public var host: String
    /// The server's TCP port, or the number in its socket's name (`.s.PGSQL.5432`).
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode
    /// A PEM file of the certificate authorities to trust (`sslrootcert`); the system's otherwise.
    public var rootCertificate: String?
    /// The most connections one server opens.
    public var poolSize = 8
    /// How long a request waits for a connection before it is answered 503.
    public var connectionWait: Duration = .seconds(5)
    /// The schema the vault's tables live in (made when missing); PostgreSQL's default
    /// (`public`) when nil. Several vaults may share a database this way: the tests give
    /// each store a schema of its own.
    public var schema: String?

    /// libpq's `sslmode`, with its meanings: `prefer` and `require` encrypt without checking
    /// the server's certificate (`require` checks its chain when `sslrootcert` names the
    /// authorities, as libpq does); `verify-ca` checks its chain, `verify-full` its name too.
    public enum TLSMode: String, Sendable, CaseIterable {
        case disable, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// Whether `database` names a PostgreSQL vault rather than an SQLite file.
    public static func isURL(_ database: String) -> Bool {
        database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
    }

    /// Whether ``host`` is the folder of a Unix socket rather than a host on the network.
    public var isUnixSocket: Bool { host.hasPrefix("/") }

    /// Reads the URL; `environment` gives `PGPASSWORD` when the URL has no password.
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard Self.isURL(text), let url = URLComponents(string: text) else {
            throw PostgresSettingsError("the database URL is not a postgres:// URL: write postgres://user[:password]@host[:port]/database")
        }
        // libpq's `host` parameter names the host in place of the URL's, and is the only way
        // a URL can name a socket folder.
        let host = url.queryItems?.last(where: { $0.name == "host" })?.value ?? url.host ?? ""
        guard !host.isEmpty else {
            throw PostgresSettingsError(
                "the database URL names no host: write postgres://user@host/database, or postgres://user@/database?host=/run/postgresql for a Unix socket"
            )
        }
        guard let user = url.user, !user.isEmpty else {
            throw PostgresSettingsError("the database URL names no user: write postgres://user@\(host)/database")
        }
        let database = String(url.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw PostgresSettingsError("the database URL names no database: write postgres://\(user)@\(host)/database")
        }
        if let port = url.port, !(1...65535).contains(port) {
            throw PostgresSettingsError("the database URL's port \(port) is out of range (1 to 65535)")
        }
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = url.port ?? 5432
        // URLComponents has decoded the user, password and path already: a second decoding
        // would read a password's "%2541" as "A".
        self.user = user
        self.password = url.password ?? environment["PGPASSWORD"]
        self.database = database
        self.tls = .prefer
        for item in url.queryItems ?? [] {
            switch item.name {
            case "host":
                break
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    let modes = TLSMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw PostgresSettingsError("the database URL's sslmode must be one of \(modes)")
                }
                tls = mode
            case "sslrootcert":
                rootCertificate = item.value
            default:
                throw PostgresSettingsError("the database URL's parameter '\(item.name)' is not known: host, sslmode and sslrootcert are")
            }
        }
    }

    /// The socket's path, in the folder ``host`` names.
    var socketPath: String { host + "/.s.PGSQL.\(port)" }

    /// The password from a file (its first line), in place of the URL's or `PGPASSWORD`.
    public mutating func readPassword(file path: String) throws {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw PostgresSettingsError("cannot read the database password file \(path)")
        }
        password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    /// The URL without its password.
    /// Encoded where needed, so that it reads back as the same settings.
    public var description: String {
        let user = Self.encoded(user, .urlUserAllowed)
        let database = Self.encoded(database, .urlPathAllowed.subtracting(["/"]))
        if isUnixSocket {
            return "postgres://\(user)@:\(port)/\(database)?host=\(Self.encoded(host, .urlQueryAllowed.subtracting(["&", "=", "#", "+"])))"
        }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(user)@\(shownHost):\(port)/\(database)?sslmode=\(tls.rawValue)"
    }

    private static func encoded(_ text: String, _ allowed: CharacterSet) -> String {
        text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// postgres-nio's configuration of a client with these settings.
    func clientConfiguration() throws -> PostgresClient.Configuration {
        var configuration =
            isUnixSocket
            ? PostgresClient.Configuration(unixSocketPath: socketPath, username: user, password: password, database: database)
            : PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database, tls: try clientTLS())
        configuration.options.maximumConnections = poolSize
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = startupParameters
        return configuration
    }

    /// What each connection sets when it starts: the vault's schema, and an end to a
    /// transaction left open. A server that lost its way to the database mid-transaction
    /// (its network cut, its process frozen) would otherwise hold the transaction's row locks
    /// until the operating system gave up on the connection, hours later, and every request
    /// for those rows, on every server, would wait as long. The vault's transactions never
    /// wait on anything but their own statements: 30 s idle is a lost client.
    var startupParameters: [(String, String)] {
        [("idle_in_transaction_session_timeout", "30s")] + (schema.map { [("search_path", $0)] } ?? [])
    }

    /// postgres-nio's configuration of one connection with these settings (the probe at open).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if isUnixSocket {
            configuration = .init(unixSocketPath: socketPath, username: user, password: password, database: database)
        } else {
            let tls: PostgresConnection.Configuration.TLS =
                switch self.tls {
                case .disable: .disable
                case .prefer: .prefer(try NIOSSLContext(configuration: tlsConfiguration()))
                default: .require(try NIOSSLContext(configuration: tlsConfiguration()))
                }
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    private func clientTLS() throws -> PostgresClient.Configuration.TLS {
        switch tls {
        case .disable: .disable
        case .prefer: .prefer(tlsConfiguration())
        default: .require(tlsConfiguration())
        }
    }

    /// The checks `sslmode` asks for, on the certificates `sslrootcert` names.
    private func tlsConfiguration() -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let rootCertificate {
            configuration.trustRoots = .file(rootCertificate)
        }
        switch tls {
        case .disable, .prefer: configuration.certificateVerification = .none
        // As libpq: require with a root certificate named checks the chain, as verify-ca.
        case .require: configuration.certificateVerification = rootCertificate == nil ? .none : .noHostnameVerification
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        return configuration
    }
}

/// A database URL or password that cannot be used; the message says what to write instead and
/// never holds the password.
public struct PostgresSettingsError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
