/// A store file that cannot be opened as asked: what is wrong with which file, and what to
/// do. The file is never changed when one of these is thrown.
///
/// A save that fails with one of these keeps every change in its context.
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
        /// Another connection (another process, the `sqlite3` shell) kept the file locked
        /// for longer than the store's ``PersistentStore/busyTimeout``. A save that fails so
        /// keeps every change in its context: save again later.
        case busy
        /// The store was opened read-only (``PersistentStore/init(readingFrom:model:busyTimeout:)``):
        /// it cannot be saved to, nor migrated to another model.
        case readOnly
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
