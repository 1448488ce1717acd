import Foundation

/// Reads JSON lines: one JSON object a line, its keys naming properties. Lines end with
/// `\n` or `\r\n`; blank lines are skipped; a UTF-8 byte order mark is skipped.
final class JSONLinesReader: RecordReader {
    let input: ByteInput
    let columns: [String]? = nil
    private var bytes: [UInt8] = []

    init(input: ByteInput) throws {
        self.input = input
        try input.skipByteOrderMark()
    }

    func next() throws -> RawRecord? {
        while try input.peek() != nil {
            let line = input.line
            bytes.removeAll(keepingCapacity: true)
            while let byte = try input.next(), byte != UInt8(ascii: "\n") { bytes.append(byte) }
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let json: Any
            do {
                json = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            } catch {
                throw ImportError.badRecord(input.file, line: line, "not valid JSON (\(Self.preview(bytes))); write one JSON object per line")
            }
            guard let object = json as? [String: Any] else {
                throw ImportError.badRecord(input.file, line: line, "\(Self.preview(bytes)) is not a JSON object; write one object per line, like {\"name\": \"value\"}")
            }
            return RawRecord(line: line, fields: object.sorted { $0.key < $1.key }.map { ($0.key, .json($0.value)) })
        }
        return nil
    }

    /// The start of a line, to show what was read.
    private static func preview(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(40), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return bytes.count > 40 ? "\(text)…" : text
    }
}
