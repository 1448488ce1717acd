/// A store file that cannot be opened as asked: what is wrong with which file, and what to
/// do. The file is never changed when one of these is thrown.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The file is not an SQLite database.
        case notADatabase
        /// The file is an SQLite database, but damaged.
        case corrupt
        /// The file was made for a model that the given model cannot migrate from in place.
        case incompatibleModel
        /// The file is an SQLite database that no ObjectStore made.
        case foreignDatabase
        /// Any other failure to read or write the file.
        case io
    }

    public var kind: Kind
    /// The store file's path (`:memory:` for an in-memory store).
    public var path: String
    public var message: String

    public init(_ kind: Kind, path: String, _ message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
