import Datasets
import Foundation

/// Standard input, line by line, as UTF-8 text: a line that is not UTF-8 is an error naming
/// the byte where it stops being so (`readLine` would replace such bytes with U+FFFD, and the
/// replacement would be saved).
struct InputLines: Sequence, IteratorProtocol {
    private let handle = FileHandle.standardInput
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false

    mutating func next() -> Result<String, DatasetError>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = newline + 1 }
                return Self.text(buffer[start..<newline])
            }
            if ended {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return Self.text(buffer[start...])
            }
            buffer.removeFirst(start)
            start = 0
            // What has arrived (a driving program's line), not a full block: it may wait for our answer.
            let chunk = handle.availableData
            if chunk.isEmpty { ended = true } else { buffer.append(contentsOf: chunk) }
        }
    }

    /// The line as text, without a final `\r`; an error at the first byte that is not UTF-8.
    private static func text(_ bytes: ArraySlice<UInt8>) -> Result<String, DatasetError> {
        let bytes = bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .error: return .failure(DatasetError("not UTF-8 text at byte \(offset + 1) of the line; write the input as UTF-8 (nothing of this line was applied)"))
            case .emptyInput: return .success(String(decoding: bytes, as: UTF8.self))
            }
        }
    }
}
