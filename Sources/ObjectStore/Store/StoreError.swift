/// A store file that cannot be opened as asked: what is wrong with which file, and what to
/// do. The file is never changed when one of these is thrown.
///
/// A save that fails with one of these keeps every change in its context.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    ///
    /// A struct, not an enum, as GRDB's `ResultCode` and postgres-nio's `PSQLError.Code`:
    /// new kinds come without breaking a caller's `switch` (which needs a `default`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The file is not an SQLite database.
        public static let notADatabase = Kind("notADatabase")
        /// The file is an SQLite database, but damaged.
        public static let corrupt = Kind("corrupt")
        /// The file was made for a model that the given model cannot migrate from in place.
        public static let incompatibleModel = Kind("incompatibleModel")
        /// The file is an SQLite database that no ObjectStore made.
        public static let foreignDatabase = Kind("foreignDatabase")
        /// Another connection (another process, the `sqlite3` shell) kept the file locked
        /// for longer than the store's ``PersistentStore/busyTimeout``. A save that fails so
        /// keeps every change in its context: save again later.
        public static let busy = Kind("busy")
        /// The store was opened read-only (``PersistentStore/init(readingFrom:model:busyTimeout:)``):
        /// it cannot be saved to, nor migrated to another model.
        public static let readOnly = Kind("readOnly")
        /// Any other failure to read or write the file.
        public static let io = Kind("io")

        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }
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
