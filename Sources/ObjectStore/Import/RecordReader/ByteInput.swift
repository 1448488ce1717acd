import Foundation

/// A file read in blocks, byte by byte, that knows how far it got: the offset, the line
/// and a checksum of every byte consumed, so that an import can record where it stopped and
/// check later that the part it imported did not change.
final class ByteInput {
    /// Where the input stands, between two records.
    struct Position: Hashable {
        /// The bytes consumed from the start of the file.
        var offset: Int64
        /// The last line consumed (0 before the first byte).
        var line: Int
        /// The FNV-1a checksum of the bytes consumed.
        var checksum: UInt64
    }

    let file: URL
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var index = 0
    private var isExhausted = false
    private static let blockSize = 1 << 16

    private(set) var offset: Int64 = 0
    /// The line of the next byte.
    private(set) var line = 1
    private var checksum = FNV1a()
    /// Whether the last byte consumed ended a line (or none was consumed).
    private var atLineStart = true

    /// Opens `file`; throws an ``ImportError`` naming it when it cannot be read.
    init(file: URL) throws {
        self.file = file
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder) else {
            throw ImportError(.unreadableFile, file: file, "no such file; check the path")
        }
        guard !isFolder.boolValue else {
            throw ImportError(.unreadableFile, file: file, "is a folder; give the CSV or JSON lines file to import")
        }
        do {
            handle = try FileHandle(forReadingFrom: file)
        } catch {
            throw ImportError(.unreadableFile, file: file, "cannot open the file (\(error.localizedDescription)); check that you may read it")
        }
    }

    deinit { try? handle.close() }

    var position: Position {
        Position(offset: offset, line: atLineStart ? line - 1 : line, checksum: checksum.value)
    }

    /// The byte `ahead` bytes after the next one, without consuming anything; nil past the end.
    @inline(__always)
    func peek(_ ahead: Int = 0) throws -> UInt8? {
        if index + ahead >= buffer.count { try fill(atLeast: ahead + 1) }
        return index + ahead < buffer.count ? buffer[index + ahead] : nil
    }

    /// Consumes and returns the next byte; nil at the end.
    @inline(__always)
    func next() throws -> UInt8? {
        guard let byte = try peek() else { return nil }
        index += 1
        offset += 1
        checksum.combine(byte)
        atLineStart = byte == UInt8(ascii: "\n")
        if atLineStart { line += 1 }
        return byte
    }

    /// Consumes a UTF-8 byte order mark at the start of the file, if there is one.
    func skipByteOrderMark() throws {
        guard offset == 0, try peek(0) == 0xEF, try peek(1) == 0xBB, try peek(2) == 0xBF else { return }
        for _ in 0..<3 { _ = try next() }
    }

    /// Consumes bytes up to `target` (an offset recorded earlier); false when the file ends
    /// first or the input is past it already.
    func skip(to target: Int64) throws -> Bool {
        guard target >= offset else { return false }
        while offset < target {
            guard try next() != nil else { return false }
        }
        return true
    }

    /// Keeps at least `count` unconsumed bytes in the buffer, unless the file ends first.
    private func fill(atLeast count: Int) throws {
        if index > 0 {
            buffer.removeFirst(index)
            index = 0
        }
        while buffer.count < count && !isExhausted {
            let data: Data?
            do {
                data = try handle.read(upToCount: Self.blockSize)
            } catch {
                throw ImportError(.unreadableFile, file: file, "cannot read the file at byte \(offset) (\(error.localizedDescription))")
            }
            guard let data, !data.isEmpty else {
                isExhausted = true
                return
            }
            buffer.append(contentsOf: data)
        }
    }
}

/// The 64-bit FNV-1a hash: fast, and enough to notice that a file's bytes changed.
struct FNV1a: Hashable {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    @inline(__always)
    mutating func combine(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
    }
}
