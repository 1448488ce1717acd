import Foundation

/// Why an import stopped or was refused: the file, the line and the field at fault, what is
/// wrong and what to do.
///
/// A bad record stops an import after the good records read before it are committed; the
/// journal then points at the bad line, so that fixing that line and running the same import
/// again resumes there. The description reads like a compiler message:
/// `teams.csv:5002: wins: 'abc' is not an integer; fix the line and import again to resume there`.
public struct ImportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem stopped the import.
    ///
    /// A struct, not an enum, as GRDB's `ResultCode` and postgres-nio's `PSQLError.Code`:
    /// new kinds come without breaking a caller's `switch` (which needs a `default`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The file cannot be opened or read, or its format cannot be told.
        public static let unreadableFile = Kind("unreadableFile")
        /// The CSV header names a column that is no attribute or to-one relationship of the
        /// entity, names one twice, or lacks a property every record needs. Nothing was imported.
        public static let badHeader = Kind("badHeader")
        /// A record cannot be read or does not fit the entity; the records before it are
        /// committed.
        public static let badRecord = Kind("badRecord")
        /// The part of the file an interrupted import already imported changed since:
        /// resuming would skip or repeat records. Restart the import to read the file again.
        public static let fileChanged = Kind("fileChanged")
        /// The file was imported completely already; importing it again would add every record
        /// a second time. Restart the import to do that anyway.
        public static let alreadyImported = Kind("alreadyImported")
        /// Committing a chunk failed (another import of the same file committed first, or
        /// SQLite refused the write); nothing of the chunk was written.
        public static let saveFailed = Kind("saveFailed")

        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }
    }

    /// What kind of problem this is.
    public var kind: Kind
    /// The file being imported.
    public var file: URL
    /// The line the bad record starts on, if the problem is on one line.
    public var line: Int?
    /// The CSV column or JSON key at fault, if one is.
    public var field: String?
    /// What is wrong, and what to do about it.
    public var message: String

    /// An error of `kind` about `file`, at `line` and `field` when the problem is there.
    public init(_ kind: Kind, file: URL, line: Int? = nil, field: String? = nil, _ message: String) {
        self.kind = kind
        self.file = file
        self.line = line
        self.field = field
        self.message = message
    }

    /// `FILE:LINE: FIELD: MESSAGE`, with the file's name and without the parts that are nil.
    public var description: String {
        "\(file.lastPathComponent):\(line.map { "\($0): " } ?? " ")\(field.map { "\($0): " } ?? "")\(message)"
    }
}
