import Foundation
import NIOSSL
import PostgresNIO

/// Where the shared PostgreSQL database is, who connects to it and how the connection is
/// secured, read from a `postgresql://USER@HOST[:PORT]/DATABASE[?sslmode=…&sslrootcert=…]` URL.
///
/// The password comes, in this order, from the URL, from `PGPASSWORD`, or from the
/// password file (`PGPASSFILE`, else `~/.pgpass`, in libpq's `host:port:database:user:password`
/// format, `*` matching anything), as PostgreSQL's own tools find it. ``description`` never
/// shows it, so a configuration can be logged.
///
/// TLS is libpq's: ``sslMode`` from the URL's `sslmode`, else `PGSSLMODE`, else
/// ``SSLMode/prefer``; the certificate authorities that `verify-ca` and `verify-full` trust
/// from `sslrootcert`, else `PGSSLROOTCERT`, else `~/.postgresql/root.crt` (`system`: the
/// system's).
///
/// ## Topics
/// - ``init(url:environment:)``
/// - ``SSLMode``
/// - ``sslMode``
/// - ``sslRootCertificate``
/// - ``connection``
public struct ServerConfiguration: Sendable, CustomStringConvertible {
    /// How a connection is encrypted and the server checked: libpq's `sslmode`.
    public enum SSLMode: String, Sendable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS when the server offers it, without checking its certificate; else plain.
        case prefer
        /// TLS or no connection. The server's certificate is checked as for ``verifyCA`` when
        /// certificate authorities are given (`sslrootcert`, or `~/.postgresql/root.crt`
        /// exists), as libpq does; otherwise not.
        case require
        /// TLS, with a server certificate signed by a trusted certificate authority.
        case verifyCA = "verify-ca"
        /// TLS, with a server certificate signed by a trusted authority and made out to the
        /// host connected to.
        case verifyFull = "verify-full"

        /// Whether the server's certificate is checked.
        public var verifiesServer: Bool { self == .verifyCA || self == .verifyFull }
    }

    public var host: String
    public var port: Int
    public var username: String
    public var database: String
    /// How the connection is encrypted and the server checked.
    public var sslMode: SSLMode
    /// The PEM file of the certificate authorities ``SSLMode/verifyCA`` and
    /// ``SSLMode/verifyFull`` trust; `system` for the system's; nil: `~/.postgresql/root.crt`.
    public var sslRootCertificate: String?
    var password: String?

    /// Reads `url`, taking a password and TLS settings it lacks from `environment` (the
    /// process's by default).
    ///
    /// - Throws: ``SharingError/invalidURL(_:reason:)`` (which does not repeat a password).
    public init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let components = URLComponents(string: url), ["postgresql", "postgres"].contains(components.scheme) else {
            throw SharingError.invalidURL(Self.redacted(url), reason: "not a postgresql:// URL")
        }
        guard let host = components.host, !host.isEmpty else { throw SharingError.invalidURL(Self.redacted(url), reason: "no host") }
        guard let user = components.user, !user.isEmpty else { throw SharingError.invalidURL(Self.redacted(url), reason: "no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else { throw SharingError.invalidURL(Self.redacted(url), reason: "no database") }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user
        self.database = database
        self.password = components.password
            ?? environment["PGPASSWORD"]
            ?? Self.passwordFromFile(environment: environment, host: host, port: port, database: database, user: user)
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard ["sslmode", "sslrootcert"].contains(item.name), let value = item.value else {
                throw SharingError.invalidURL(Self.redacted(url), reason: "\(item.name) is not a setting this library reads (it reads sslmode and sslrootcert)")
            }
            query[item.name] = value
        }
        let mode = query["sslmode"] ?? environment["PGSSLMODE"] ?? SSLMode.prefer.rawValue
        guard let sslMode = SSLMode(rawValue: mode) else {
            throw SharingError.invalidURL(Self.redacted(url), reason: "sslmode \(mode) is not one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.sslMode = sslMode
        sslRootCertificate = query["sslrootcert"] ?? environment["PGSSLROOTCERT"]
        home = environment["HOME"]
        if sslRootCertificate == "system", sslMode != .verifyFull {
            // As libpq 16: the system's authorities vouch for any host they certify.
            throw SharingError.invalidURL(Self.redacted(url), reason: "sslrootcert=system needs sslmode=verify-full, not \(sslMode.rawValue)")
        }
    }

    /// The certificate authorities' file to check the server against: ``sslRootCertificate``,
    /// else `~/.postgresql/root.crt`.
    private var authoritiesFile: String {
        sslRootCertificate ?? home.map { $0 + "/.postgresql/root.crt" } ?? "~/.postgresql/root.crt"
    }

    /// Whether the server's certificate is checked against ``authoritiesFile``: for
    /// `verify-ca` and `verify-full`, and for `require` when authorities are given or the
    /// default file exists (libpq's rule).
    var checksAuthority: Bool {
        sslMode.verifiesServer || (sslMode == .require && (sslRootCertificate != nil || FileManager.default.fileExists(atPath: authoritiesFile)))
    }

    private var home: String?

    /// The configuration of a postgres-nio connection to the server.
    ///
    /// - Throws: ``SharingError/Kind-swift.struct/insecureConnection`` when the certificate
    ///   authorities to trust cannot be read.
    public var connection: PostgresConnection.Configuration {
        get throws {
            PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database, tls: try tls())
        }
    }

    private func tls() throws -> PostgresConnection.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch sslMode {
        case .disable: return .disable
        case .prefer: configuration.certificateVerification = .none
        case .require, .verifyCA: configuration.certificateVerification = checksAuthority ? .noHostnameVerification : .none
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        if checksAuthority {
            let file = authoritiesFile
            if file == "system" {
                configuration.trustRoots = .default
            } else {
                guard FileManager.default.isReadableFile(atPath: file) else {
                    throw SharingError.insecureConnection(server: description, reason: "the certificate authorities file \(file) cannot be read; sslmode=\(sslMode.rawValue) checks the server's certificate against it: give its path as sslrootcert (or PGSSLROOTCERT)")
                }
                do {
                    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
                } catch {
                    throw SharingError.insecureConnection(server: description, reason: "\(file) holds no PEM certificate (\(error)); give the certificate authorities' PEM file as sslrootcert")
                }
            }
        }
        let context = try NIOSSLContext(configuration: configuration)
        return sslMode == .prefer ? .prefer(context) : .require(context)
    }

    public var description: String { "postgresql://\(username)@\(host):\(port)/\(database)" }

    private static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? "the URL"
    }

    /// The first matching line's password in libpq's password file.
    private static func passwordFromFile(environment: [String: String], host: String, port: Int, database: String, user: String) -> String? {
        let path = environment["PGPASSFILE"] ?? environment["HOME"].map { $0 + "/.pgpass" }
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = passwordFileFields(line)
            guard fields.count == 5 else { continue }
            let wanted = [host, String(port), database, user]
            if zip(fields, wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// A password file line's fields: separated by `:`, with `\:` and `\\` for `:` and `\`.
    private static func passwordFileFields(_ line: Substring) -> [String] {
        var fields = [""]
        var escaped = false
        for character in line {
            if escaped { fields[fields.count - 1].append(character); escaped = false }
            else if character == "\\" { escaped = true }
            else if character == ":" { fields.append("") }
            else { fields[fields.count - 1].append(character) }
        }
        return fields
    }
}
