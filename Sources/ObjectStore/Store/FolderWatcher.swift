import Dispatch
import Foundation
import GRDB
import Synchronization

/// The process's one inotify instance (the kernel allows 128 per user by default), with a
/// watch on each folder that holds a followed store, for files made, moved and deleted there,
/// and one on each of its store files, for their writes: each event goes to the feeds of the
/// store files it names (the file, its `-wal`, its `-journal`); a lost event (the queue
/// overflowed) to every feed.
///
/// Writes are watched on the files, not the folder: the kernel tells a folder's watcher of
/// every write to any file in it, so stores sharing a folder would each wake for all the
/// others' writes, only to drop the events by name.
final class FolderWatcher: @unchecked Sendable {
    /// Nil where inotify is not available.
    static let shared = FolderWatcher()

    private let descriptor: Int32
    private let queue = DispatchQueue(label: "ObjectStore.FolderWatcher")
    private let source: any DispatchSourceRead
    // On the queue only.
    private var folders: [Int32: [String: [UUID: @Sendable () -> Void]]] = [:]
    private var watchOfFolder: [String: Int32] = [:]
    /// The watches of store files (by inode: a file made again gets a new one), each with
    /// its folder's watch and its name there.
    private var files: [Int32: (folder: Int32, name: String)] = [:]
    /// How many events each folder's watches brought (its files' too), by folder path.
    private var eventCounts: [String: Int] = [:]

    private static let folderEvents = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)
    private static let fileEvents = UInt32(IN_MODIFY | IN_CLOSE_WRITE)

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
            let watch = watchOfFolder[folder] ?? inotify_add_watch(descriptor, folder, Self.folderEvents)
            guard watch >= 0 else { return nil }
            watchOfFolder[folder] = watch
            for name in names {
                folders[watch, default: [:]][name, default: [:]][id] = written
                watchFile(name, in: folder, folderWatch: watch)
            }
            return watch
        }
        guard let watch else { return nil }
        return ObservationToken { [self] in
            queue.async { [self] in
                for name in names { folders[watch]?[name]?[id] = nil }
                for (fileWatch, file) in files where file.folder == watch && folders[watch]?[file.name]?.isEmpty ?? true {
                    files[fileWatch] = nil
                    inotify_rm_watch(descriptor, fileWatch)
                }
                if folders[watch]?.values.allSatisfy(\.isEmpty) ?? true {
                    folders[watch] = nil
                    watchOfFolder[folder] = nil
                    inotify_rm_watch(descriptor, watch)
                }
            }
        }
    }

    /// Watches the writes of the file `name` in `folder`, if it is there (a file made later
    /// is watched when the folder's watch tells of it). On the queue.
    private func watchFile(_ name: String, in folder: String, folderWatch: Int32) {
        let watch = inotify_add_watch(descriptor, (folder as NSString).appendingPathComponent(name), Self.fileEvents)
        if watch >= 0 { files[watch] = (folderWatch, name) }
    }

    /// How many commits of this process hold the events back (``holdEvents()``).
    private let holds = Mutex(0)

    /// Leaves the kernel's events unread until ``releaseEvents()``: called while a commit of
    /// this process writes its store's files. Each write of a commit (SQLite writes each
    /// page of the WAL apart, thousands for a big transaction) makes an event, and the feed
    /// drops them all (the commit's end tells of it); unread, the kernel merges them into
    /// one. Other stores' events wait the commit's few milliseconds. Balanced by
    /// ``releaseEvents()``; from any thread.
    func holdEvents() {
        let first = holds.withLock { count in
            count += 1
            return count == 1
        }
        if first { source.suspend() }
    }

    /// Reads the events held back since ``holdEvents()``, once no commit holds them.
    func releaseEvents() {
        let last = holds.withLock { count in
            count -= 1
            return count == 0
        }
        if last { source.resume() }
    }

    /// How many events the watches of `url`'s folder and of its store files brought so far:
    /// what woke this process for them.
    func eventCount(inFolderOf url: URL) -> Int {
        queue.sync { eventCounts[url.deletingLastPathComponent().path] ?? 0 }
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
                let folderWatch = files[event.wd]?.folder ?? event.wd
                if let folder = watchOfFolder.first(where: { $0.value == folderWatch })?.key { eventCounts[folder, default: 0] += 1 }
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were lost: any store's may be among them.
                    for names in folders.values { for handlers in names.values { told.merge(handlers) { first, _ in first } } }
                } else if let file = files[event.wd] {
                    // A store file written, or gone (its watch with it).
                    if event.mask & UInt32(IN_IGNORED) != 0 { files[event.wd] = nil }
                    if let handlers = folders[file.folder]?[file.name] { told.merge(handlers) { first, _ in first } }
                } else if event.len > 0 {
                    let name = String(cString: buffer.advanced(by: nameStart).assumingMemoryBound(to: CChar.self))
                    if let handlers = folders[event.wd]?[name] {
                        told.merge(handlers) { first, _ in first }
                        // Made or moved in: its writes are watched from now on.
                        if event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0,
                           let folder = watchOfFolder.first(where: { $0.value == event.wd })?.key {
                            watchFile(name, in: folder, folderWatch: event.wd)
                        }
                    }
                }
                offset = nameStart + Int(event.len)
            }
        }
        for written in told.values { written() }
    }
}
