/// How far an import has got, reported after each chunk commits.
public struct ImportProgress: Sendable, Hashable {
    /// The last line of the file consumed (and committed).
    public var line: Int
    /// Committed records, including those of earlier interrupted runs of this import.
    public var recordsImported: Int
    /// The bytes of the file consumed (and committed), from its start.
    public var bytesRead: Int64
    /// The size of the file when the run started.
    public var totalBytes: Int64

    /// Progress as an importer reports it.
    public init(line: Int, recordsImported: Int, bytesRead: Int64, totalBytes: Int64) {
        self.line = line
        self.recordsImported = recordsImported
        self.bytesRead = bytesRead
        self.totalBytes = totalBytes
    }

    /// The part of the file consumed, from 0 to 1: `bytesRead / totalBytes`, and 1 for an
    /// empty file.
    public var fractionCompleted: Double {
        totalBytes <= 0 ? 1 : min(1, Double(bytesRead) / Double(totalBytes))
    }
}

/// How a run of an ``ObjectImporter`` ended.
public struct ImportResult: Sendable, Hashable {
    /// Whether the run read the whole file.
    public enum Outcome: Sendable, Hashable {
        /// Every record of the file is imported.
        case finished
        /// ``ObjectImporter/cancel()`` stopped the run; running the same import again
        /// resumes at ``ImportResult/nextLine``.
        case cancelled
    }

    public var outcome: Outcome
    /// The records this run committed.
    public var recordsImported: Int
    /// The records of this import committed so far, including those of earlier interrupted
    /// runs.
    public var totalRecordsImported: Int
    /// The first line this run read when it resumed an interrupted import; nil when it
    /// started at the top of the file.
    public var resumedAtLine: Int?
    /// The line a resumed run would start with.
    public var nextLine: Int

    /// A result as an importer returns it.
    public init(outcome: Outcome, recordsImported: Int, totalRecordsImported: Int, resumedAtLine: Int?, nextLine: Int) {
        self.outcome = outcome
        self.recordsImported = recordsImported
        self.totalRecordsImported = totalRecordsImported
        self.resumedAtLine = resumedAtLine
        self.nextLine = nextLine
    }
}
