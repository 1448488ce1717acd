import Foundation

/// An error of sharing a store through PostgreSQL: its ``kind``, what it concerns as fields
/// (the entity and object, or the server address), and a message that says what to do.
///
/// ## Topics
/// - ``Kind-swift.struct``
/// - ``kind``
/// - ``entity``
/// - ``globalID``
/// - ``url``
/// - ``reason``
/// - ``unreadableChange(entity:object:reason:)``
/// - ``invalidURL(_:reason:)``
/// - ``insecureConnection(server:reason:)``
/// - ``authenticationFailed(server:reason:)``
/// - ``permissionDenied(reason:)``
/// - ``isRefusal``
public struct SharingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    ///
    /// A struct, not an enum, as GRDB's `ResultCode` and postgres-nio's `PSQLError.Code`:
    /// new kinds come without breaking a caller's `switch` (which needs a `default`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// A row of the server's change log that cannot be read at all. A row that only
        /// does not fit the model is no error: it is a ``RejectedChange``.
        public static let unreadableChange = Kind("unreadableChange")
        /// A server address that is not a `postgresql://` URL this library understands.
        public static let invalidURL = Kind("invalidURL")
        /// A connection that cannot be secured as ``ServerConfiguration/sslMode`` asks: the
        /// server offers no TLS, its certificate is not signed by a trusted authority or is
        /// made out to another host, or the authorities' file cannot be read. Like the other
        /// refusals (``SharingError/isRefusal``), tried again less and less often, up to
        /// every 5 minutes: the server's or the desktop's settings must change first.
        public static let insecureConnection = Kind("insecureConnection")
        /// The server refused the user: a wrong or missing password, a role that may not
        /// log in, no `pg_hba.conf` line for it.
        public static let authenticationFailed = Kind("authenticationFailed")
        /// The server refused what sharing needs for permission: the shared tables were made
        /// for another version of the model, and only their owner may change them.
        public static let permissionDenied = Kind("permissionDenied")

        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }
    }

    public var kind: Kind
    /// The entity of the change concerned, for ``Kind-swift.struct/unreadableChange``.
    public var entity: String?
    /// The global ID of the object concerned, for ``Kind-swift.struct/unreadableChange``.
    public var globalID: UUID?
    /// The server address concerned, without its password, for ``Kind-swift.struct/invalidURL``,
    /// ``Kind-swift.struct/insecureConnection`` and ``Kind-swift.struct/authenticationFailed``.
    public var url: String?
    /// Why: what is wrong with the row or the address.
    public var reason: String

    /// A row of the server's change log that cannot be read at all (`reason` names its transaction).
    public static func unreadableChange(entity: String, object: UUID, reason: String) -> SharingError {
        SharingError(kind: .unreadableChange, entity: entity, globalID: object, reason: reason)
    }

    /// A server address that is not a `postgresql://` URL this library reads.
    public static func invalidURL(_ url: String, reason: String) -> SharingError {
        SharingError(kind: .invalidURL, url: url, reason: reason)
    }

    /// A connection to `server` that cannot be secured as its `sslmode` asks (`reason` says
    /// what failed and what to change).
    public static func insecureConnection(server: String, reason: String) -> SharingError {
        SharingError(kind: .insecureConnection, url: server, reason: reason)
    }

    /// `server` refused the user (`reason`: the server's words, and what to check).
    public static func authenticationFailed(server: String, reason: String) -> SharingError {
        SharingError(kind: .authenticationFailed, url: server, reason: reason)
    }

    /// The server refused what sharing needs for permission (`reason` says what, and who can
    /// mend it).
    public static func permissionDenied(reason: String) -> SharingError {
        SharingError(kind: .permissionDenied, reason: reason)
    }

    /// Whether this is an error that trying again soon cannot mend (the settings of the
    /// server or of the desktop must change first).
    public var isRefusal: Bool { kind == .insecureConnection || kind == .authenticationFailed || kind == .permissionDenied }

    private init(kind: Kind, entity: String? = nil, globalID: UUID? = nil, url: String? = nil, reason: String) {
        self.kind = kind
        self.entity = entity
        self.globalID = globalID
        self.url = url
        self.reason = reason
    }

    public var description: String {
        switch kind {
        case .unreadableChange:
            return "the server's change log has a change of \(entity ?? "?") \(globalID.map { "\($0)" } ?? "?") that this model cannot read (\(reason)); make every desktop use the same model, or fix the row"
        case .insecureConnection:
            return "cannot connect to \(url ?? "the server") securely: \(reason)"
        case .authenticationFailed:
            return "\(url ?? "the server") refused the connection: \(reason)"
        case .permissionDenied:
            return reason
        case .invalidURL:
            return "\(url ?? "?") is not a server address this library reads (\(reason)); write postgresql://USER@HOST[:PORT]/DATABASE[?sslmode=MODE&sslrootcert=FILE]"
        default:
            return "\(kind): \(reason)"
        }
    }
}
