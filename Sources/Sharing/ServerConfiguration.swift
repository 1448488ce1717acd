import Foundation
import PostgresNIO

/// Where the shared PostgreSQL database is and who connects to it, read from a
/// `postgresql://USER@HOST[:PORT]/DATABASE` URL.
///
/// The password comes, in this order, from the URL, from `PGPASSWORD`, or from the
/// password file (`PGPASSFILE`, else `~/.pgpass`, in libpq's `host:port:database:user:password`
/// format, `*` matching anything), as PostgreSQL's own tools find it. ``description`` never
/// shows it, so a configuration can be logged.
///
/// ## Topics
/// - ``init(url:environment:)``
/// - ``connection``
public struct ServerConfiguration: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var database: String
    var password: String?

    /// Reads `url`, taking a password it lacks from `environment` (the process's by default).
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
    }

    /// The configuration of a postgres-nio connection to the server.
    public var connection: PostgresConnection.Configuration {
        PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database, tls: .disable)
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
