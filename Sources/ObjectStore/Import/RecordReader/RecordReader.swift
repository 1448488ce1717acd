import Foundation

/// One record as the file spells it, before it is converted to the entity's types.
struct RawRecord {
    /// A field's value as written.
    enum Field {
        /// CSV text; `quoted` tells `""` (an empty text) from an empty field (no value).
        case text(String, quoted: Bool)
        /// A value of a JSON object, as `JSONSerialization` reads it.
        case json(Any)
    }

    /// The line the record starts on.
    var line: Int
    /// The record's keys (CSV column names, JSON keys) and values, in the file's order
    /// (JSON keys sorted).
    var fields: [(key: String, value: Field)]
}

/// Reads the records of a file one at a time, streaming, through a ``ByteInput`` whose
/// position is where the next record starts.
protocol RecordReader: AnyObject {
    var input: ByteInput { get }
    /// The keys every record has (a CSV header), checked before anything is imported; nil
    /// when each record names its own (JSON lines).
    var columns: [String]? { get }
    /// The next record; nil at the end of the file. Throws an ``ImportError`` of kind
    /// ``ImportError/Kind/badRecord`` for a record that cannot be read.
    func next() throws -> RawRecord?
}

extension ImportFormat {
    /// A reader of `file` in this format, past its header.
    func makeReader(for file: URL) throws -> any RecordReader {
        let input = try ByteInput(file: file)
        switch self {
        case .csv: return try CSVReader(input: input)
        case .jsonLines: return try JSONLinesReader(input: input)
        }
    }
}

extension ImportError {
    /// A record that cannot be imported: the advice to fix it and resume is added.
    static func badRecord(_ file: URL, line: Int, field: String? = nil, _ problem: String) -> ImportError {
        ImportError(.badRecord, file: file, line: line, field: field, "\(problem); fix the line and import again to resume there")
    }
}
