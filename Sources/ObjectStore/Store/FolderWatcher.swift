import Dispatch
import Foundation
import GRDB
import Synchronization

/// The process's one inotify instance (the kernel allows 128 per user by default), with a
/// watch on each folder that holds a followed store: each event goes to the feeds of the
/// store files it names (the file, its `-wal`, its `-journal`); a lost event (the queue
/// overflowed) to every feed.
final class FolderWatcher: @unchecked Sendable {
    /// Nil where inotify is not available.
    static let shared = FolderWatcher()

    private let descriptor: Int32
    private let queue = DispatchQueue(label: "ObjectStore.FolderWatcher")
    private let source: any DispatchSourceRead
    // On the queue only.
    private var folders: [Int32: [String: [UUID: @Sendable () -> Void]]] = [:]
    private var watchOfFolder: [String: Int32] = [:]

    private init?() {
        descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { return nil }
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [unowned self] in self.readEvents() }
        source.resume()
    }

    /// Calls `written` (on the watcher's queue) whenever the file at `url`, its `-wal` or
    /// its `-journal` is written, created, moved in or deleted, until the token is
    /// cancelled; nil if its folder cannot be watched (the per-user watch limit reached).
    func watch(_ url: URL, _ written: @escaping @Sendable () -> Void) -> ObservationToken? {
        let folder = url.deletingLastPathComponent().path
        let names = [url.lastPathComponent, url.lastPathComponent + "-wal", url.lastPathComponent + "-journal"]
        let id = UUID()
        let watch: Int32? = queue.sync {
            let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_CLOSE_WRITE)
            let watch = watchOfFolder[folder] ?? inotify_add_watch(descriptor, folder, mask)
            guard watch >= 0 else { return nil }
            watchOfFolder[folder] = watch
            for name in names { folders[watch, default: [:]][name, default: [:]][id] = written }
            return watch
        }
        guard let watch else { return nil }
        return ObservationToken { [self] in
            queue.async { [self] in
                for name in names { folders[watch]?[name]?[id] = nil }
                if folders[watch]?.values.allSatisfy(\.isEmpty) ?? true {
                    folders[watch] = nil
                    watchOfFolder[folder] = nil
                    inotify_rm_watch(descriptor, watch)
                }
            }
        }
    }

    /// Reads every pending event and tells the feeds of the files they name, once each.
    private func readEvents() {
        var told: [UUID: @Sendable () -> Void] = [:]
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, size)
            guard count > 0 else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = offset + MemoryLayout<inotify_event>.size
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were lost: any store's may be among them.
                    for files in folders.values { for handlers in files.values { told.merge(handlers) { first, _ in first } } }
                } else if event.len > 0 {
                    let name = String(cString: buffer.advanced(by: nameStart).assumingMemoryBound(to: CChar.self))
                    if let handlers = folders[event.wd]?[name] { told.merge(handlers) { first, _ in first } }
                }
                offset = nameStart + Int(event.len)
            }
        }
        for written in told.values { written() }
    }
}
