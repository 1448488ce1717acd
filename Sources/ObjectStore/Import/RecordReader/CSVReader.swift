import Foundation

/// Reads comma-separated values (RFC 4180): a header row naming the columns, then one
/// record a row. Fields may be quoted (`"a, b"`), with doubled quotes inside (`"say ""hi"""`)
/// and line breaks inside; rows end with `\n` or `\r\n`; a UTF-8 byte order mark is skipped;
/// blank rows are skipped.
final class CSVReader: RecordReader {
    let input: ByteInput
    private let header: [String]
    private var bytes: [UInt8] = []
    var columns: [String]? { header }

    /// A row as read: the line it starts on and its fields, each with whether it was quoted.
    private typealias Row = (line: Int, fields: [(text: String, quoted: Bool)])

    private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","),
        newline = UInt8(ascii: "\n"), carriageReturn = UInt8(ascii: "\r")

    /// Reads the header row; an empty file has no columns and no records.
    init(input: ByteInput) throws {
        self.input = input
        try input.skipByteOrderMark()
        var header: [String] = []
        let firstRow: Row?
        do {
            var scratch: [UInt8] = []
            firstRow = try Self.readRow(input, bytes: &scratch)
        } catch let problem as RowProblem {
            throw ImportError(.badHeader, file: input.file, line: problem.line,
                              "the first row should name the columns, but \(problem.message) (is this a CSV file?)")
        }
        if let row = firstRow {
            header = row.fields.map { $0.text.trimmingCharacters(in: .whitespaces) }
            if let index = header.firstIndex(of: "") {
                throw ImportError(.badHeader, file: input.file, line: row.line,
                                  "column \(index + 1) of the header has no name; the first row must name each column after a property")
            }
            var seen: Set<String> = []
            if let duplicate = header.first(where: { !seen.insert($0).inserted }) {
                throw ImportError(.badHeader, file: input.file, line: row.line, field: duplicate,
                                  "the header names this column twice; remove one of them")
            }
        }
        self.header = header
    }

    func next() throws -> RawRecord? {
        while true {
            let row: Row
            do {
                guard let next = try Self.readRow(input, bytes: &bytes) else { return nil }
                row = next
            } catch let problem as RowProblem {
                throw ImportError.badRecord(input.file, line: problem.line, problem.message)
            }
            if row.fields.count == 1 && row.fields[0].text.isEmpty && !row.fields[0].quoted { continue }  // a blank row
            guard row.fields.count == header.count else {
                throw ImportError.badRecord(input.file, line: row.line,
                    "has \(row.fields.count) field\(row.fields.count == 1 ? "" : "s") but the header has \(header.count) column\(header.count == 1 ? "" : "s") (a comma too many or too few, or an unquoted comma inside a value?)")
            }
            return RawRecord(line: row.line, fields: zip(header, row.fields).map { ($0, .text($1.text, quoted: $1.quoted)) })
        }
    }

    /// Why a row cannot be read, whether it is the header or a record.
    private struct RowProblem: Error {
        var line: Int
        var message: String
    }

    /// One row's fields, and the line it starts on; nil at the end of the file.
    private static func readRow(_ input: ByteInput, bytes: inout [UInt8]) throws -> Row? {
        guard try input.peek() != nil else { return nil }
        let line = input.line
        var fields: [(text: String, quoted: Bool)] = []
        while true {
            bytes.removeAll(keepingCapacity: true)
            let quoted = try input.peek() == quote
            if quoted {
                let quoteLine = input.line
                _ = try input.next()
                while true {
                    guard let byte = try input.next() else {
                        throw RowProblem(line: line, message:
                            "the quote opened on line \(quoteLine) is never closed; close it, or double the quotes inside the field (\"\")")
                    }
                    if byte == quote {
                        guard try input.peek() == quote else { break }
                        _ = try input.next()
                    }
                    bytes.append(byte)
                }
            } else {
                while let byte = try input.peek(), byte != comma, byte != newline {
                    if byte == carriageReturn, try input.peek(1) == newline { break }
                    bytes.append(byte)
                    _ = try input.next()
                }
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw RowProblem(line: line, message: "field \(fields.count + 1) is not UTF-8 text; save the file as UTF-8")
            }
            fields.append((text, quoted))
            switch try input.next() {
            case comma?:
                continue
            case newline?, nil:
                return (line, fields)
            case carriageReturn? where try input.peek() == newline:
                _ = try input.next()
                return (line, fields)
            case let other?:
                throw RowProblem(line: line, message:
                    "field \(fields.count) has '\(Character(Unicode.Scalar(other)))' after its closing quote; quote the whole field and double the quotes inside it (\"\")")
            }
        }
    }
}
