import Foundation
import ObjectStore
import Synchronization

/// Where controllers keep their section caches, and how they read and write them.
///
/// A cache file holds the row keys and section runs of one request's results, with what
/// they depend on: the store file, the model, the request, and the store's generation (see
/// `PersistentStore/generation()`). A cache whose dependencies differ, or whose bytes are
/// damaged, is ignored and rewritten; it is never trusted.
public enum SectionCache {
    private static let directoryStorage = Mutex<URL?>(nil)

    /// The folder of cache files: `$XDG_CACHE_HOME/fetched-results` (`~/.cache/...`), as
    /// Core Data keeps its caches in the app's caches folder. Set only by this package's
    /// tests and benchmarks: it is one folder for the whole process.
    public package(set) static var directory: URL {
        get {
            directoryStorage.withLock { stored in
                if let stored { return stored }
                let environment = ProcessInfo.processInfo.environment
                let base = environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
                    ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
                return base.appendingPathComponent("fetched-results")
            }
        }
        set { directoryStorage.withLock { $0 = newValue } }
    }

    static func url(name: String) -> URL {
        let safe = name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }
        return directory.appendingPathComponent(String(safe) + ".frcache")
    }

    /// Deletes the cache `name`, or every cache when nil.
    public static func delete(name: String?) {
        if let name {
            try? FileManager.default.removeItem(at: url(name: name))
        } else if let files = try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) {
            for file in files where file.pathExtension == "frcache" { try? FileManager.default.removeItem(at: file) }
        }
    }

    /// What a cache depends on, as text.
    static func dependencies<Result>(request: FetchRequest<Result>, sectionNameKeyPath: String?, context: ObjectContext) -> String? {
        guard !context.hasChanges, let generation = try? context.store.generation(),
              let identifier = try? context.store.identifier() else { return nil }
        return [
            "v2", context.store.url?.path ?? ":memory:", identifier, context.model.fingerprint, String(generation),
            request.entityName, request.predicate?.predicateFormat ?? "", request.sortDescriptors.map(\.description).joined(separator: ","),
            String(request.fetchLimit), String(request.fetchOffset), sectionNameKeyPath ?? "",
        ].joined(separator: "\u{1F}")
    }

    /// The sections cached as `name`, when the cache was written with `expected` dependencies.
    static func read<Result>(name: String, dependencies expected: String) -> [FetchedResultsController<Result>.Section]? {
        guard let data = try? Data(contentsOf: url(name: name)) else { return nil }
        var reader = ByteReader(data: data)
        guard let header = reader.string(), header == expected,
              let sectionCount = reader.int64(), sectionCount >= 0 else { return nil }
        var sections: [FetchedResultsController<Result>.Section] = []
        for _ in 0..<sectionCount {
            guard let sectionName = reader.string(), let keys = reader.int64Array() else { return nil }
            sections.append(.init(name: sectionName, keys: keys))
        }
        guard let stored = reader.int64(), stored == Int64(bitPattern: checksum(data.prefix(reader.offset - 8))),
              reader.offset == data.count else { return nil }
        return sections
    }

    /// Writes `sections` as the cache `name`, valid while `dependencies` hold (on any thread).
    static func write<Result>(_ sections: [FetchedResultsController<Result>.Section], name: String, dependencies: String) {
        var data = Data()
        append(dependencies, to: &data)
        append(Int64(sections.count), to: &data)
        for section in sections {
            append(section.name, to: &data)
            append(Int64(section.keys.count), to: &data)
            section.keys.withUnsafeBytes { data.append(contentsOf: $0) }
        }
        append(Int64(bitPattern: checksum(data)), to: &data)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? data.write(to: url(name: name), options: .atomic)
    }

    private static func append(_ value: Int64, to data: inout Data) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    private static func append(_ string: String, to data: inout Data) {
        let bytes = Array(string.utf8)
        append(Int64(bytes.count), to: &data)
        data.append(contentsOf: bytes)
    }

    /// FNV-1a over the bytes 8 at a time (then the last few): a million keys make 8 MB,
    /// which byte by byte through `Data`'s iterator took 65-80 ms to check.
    private static func checksum(_ data: Data) -> UInt64 {
        data.withUnsafeBytes { raw in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            let words = raw.count / 8
            for i in 0..<words {
                hash = (hash ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))) &* 0x100_0000_01b3
            }
            for byte in raw[(words * 8)...] { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return hash
        }
    }

    private struct ByteReader {
        let data: Data
        var offset = 0

        mutating func int64() -> Int64? {
            guard offset + 8 <= data.count else { return nil }
            let value = data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: Int64.self) }
            offset += 8
            return Int64(littleEndian: value)
        }

        mutating func string() -> String? {
            guard let count = int64(), count >= 0, count <= data.count - offset else { return nil }
            let bytes = data[data.startIndex + offset ..< data.startIndex + offset + Int(count)]
            offset += Int(count)
            return String(bytes: bytes, encoding: .utf8)
        }

        mutating func int64Array() -> [Int64]? {
            guard let count = int64(), count >= 0, count <= (data.count - offset) / 8 else { return nil }
            let keys = data.withUnsafeBytes { raw in
                (0..<Int(count)).map { Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + $0 * 8, as: Int64.self)) }
            }
            offset += Int(count) * 8
            return keys
        }
    }
}

extension FetchedResultsController {
    /// Deletes the section cache `name`, or every cache when nil.
    public static func deleteCache(withName name: String?) {
        SectionCache.delete(name: name)
    }
}
