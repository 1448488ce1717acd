import Datasets
import Foundation

/// Standard input, line by line, as UTF-8 text: a line that is not UTF-8 is an error naming
/// the byte where it stops being so (`readLine` would replace such bytes with U+FFFD, and the
/// replacement would be saved). A line longer than ``maximumLineBytes`` is an error, read
/// past without being kept.
///
/// Reading is linear in the input: each byte is searched for a newline once, however many
/// chunks a long line arrives in, and a line is checked as UTF-8 in one pass.
struct InputLines: Sequence, IteratorProtocol {
    /// The longest line taken: 64 MiB.
    static let maximumLineBytes = 64 << 20

    private let handle = FileHandle.standardInput
    private let maximum: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next newline goes on: the bytes before it have none.
    private var searched = 0
    /// How many bytes of an over-long line were dropped so far (nil while the line fits).
    private var dropped: Int?
    private var ended = false

    init(maximumLineBytes: Int = Self.maximumLineBytes) {
        maximum = maximumLineBytes
    }

    mutating func next() -> Result<String, DatasetError>? {
        while true {
            if let newline = buffer[searched...].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = newline + 1; searched = start }
                return line(buffer[start..<newline])
            }
            searched = buffer.count
            if ended {
                guard start < buffer.count || dropped != nil else { return nil }
                defer { start = buffer.count; searched = start }
                return line(buffer[start...])
            }
            buffer.removeFirst(start)
            searched -= start
            start = 0
            if buffer.count > maximum {
                // Too long to keep: only its length is counted from here on.
                dropped = (dropped ?? 0) + buffer.count
                buffer.removeAll(keepingCapacity: true)
                searched = 0
            }
            // What has arrived (a driving program's line), not a full block: it may wait for our answer.
            let chunk = handle.availableData
            if chunk.isEmpty { ended = true } else { buffer.append(contentsOf: chunk) }
        }
    }

    private mutating func line(_ bytes: ArraySlice<UInt8>) -> Result<String, DatasetError> {
        let length = (dropped ?? 0) + bytes.count
        dropped = nil
        guard length <= maximum else {
            return .failure(DatasetError("the line is \(length) bytes long, more than the \(maximum) bytes (\(maximum >> 20) MiB) a line may have; nothing of it was applied: split it into several operations"))
        }
        return Self.text(bytes)
    }

    /// The line as text, without a final `\r`; an error at the first byte that is not UTF-8.
    private static func text(_ bytes: ArraySlice<UInt8>) -> Result<String, DatasetError> {
        let bytes = bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes
        if let text = String(validating: bytes, as: UTF8.self) { return .success(text) }
        // Not UTF-8: find where, for the message.
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while case .valid(let scalar) = parser.parseScalar(from: &iterator) { offset += scalar.count }
        return .failure(DatasetError("not UTF-8 text at byte \(offset + 1) of the line; write the input as UTF-8 (nothing of this line was applied)"))
    }
}
