import Dispatch
import Foundation
import GRDB
import Synchronization

/// Tells subscribers that the store's change history grew, whoever wrote it: one store-level
/// route from a commit to every context, controller, `watch`, the sharing engine and a
/// developer's own code (``PersistentStore/observeChanges(on:_:)``).
///
/// Commits are known without looking:
/// - **in this process** (any context's save, an import, the sharing engine's pulled rows:
///   every write through the store's GRDB writer) at commit, by a GRDB `TransactionObserver`;
/// - **in other processes** (another program, another ``PersistentStore`` object on the
///   file, the `sqlite3` shell) by the kernel: an inotify watch on the store's folder wakes
///   the feed when the store file, its `-wal` or `-journal` is written, created, replaced
///   or deleted (a WAL checkpoint, a truncated or recreated WAL included).
///
/// Each wake-up reads one number, the history's newest token (`sqlite_sequence`), and
/// subscribers are told only when it moved. Wake-ups that come while a look is pending make
/// no second look; a file write is looked at again up to a second later, since a commit shows
/// to readers a moment after its last write (see `fileWritten()`).
///
/// A slow safety look (every ``fallbackInterval`` or a subscriber's own) runs only where
/// the kernel cannot tell: no inotify (`inotify_init1` or the watch failed, say the
/// per-user watch limit was reached), or a store on a network or FUSE file system (NFS,
/// SMB/CIFS, FUSE: inotify there sees this machine's writes, not other machines').
///
/// Subscribers are told on their own queue, one pending call each at most: a slow one
/// falls behind and catches up by reading the history, and never holds up a writer (a
/// commit only sets a flag and queues a look on the feed's queue).
package final class StoreChangeFeed: @unchecked Sendable {
    private let database: any DatabaseWriter
    private let url: URL?
    private let queue = DispatchQueue(label: "ObjectStore.StoreChangeFeed")
    private let state = Mutex(State())

    /// The safety look's interval where the kernel cannot tell, unless a subscriber asks
    /// for a shorter one.
    static let fallbackInterval: DispatchTimeInterval = .seconds(2)

    private struct State {
        var subscribers: [UUID: Subscriber] = [:]
        var started = false
        var lookScheduled = false
        /// The newest token subscribers were told of.
        var token: Int64 = 0
    }

    // On the feed's queue only.
    private var observer: CommitObserver?
    private var source: (any DispatchSourceRead)?
    private var timer: (any DispatchSourceTimer)?
    /// Whether the kernel tells of other processes' commits.
    private var kernelWatches = false
    /// File writes the kernel told of.
    private var writes = 0

    private final class Subscriber: @unchecked Sendable {
        let queue: DispatchQueue
        let fallback: DispatchTimeInterval?
        let handler: @Sendable () -> Void
        let pending = Atomic<Bool>(false)

        init(queue: DispatchQueue, fallback: DispatchTimeInterval?, handler: @escaping @Sendable () -> Void) {
            self.queue = queue
            self.fallback = fallback
            self.handler = handler
        }

        func tell() {
            guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
            queue.async {
                self.pending.store(false, ordering: .releasing)
                self.handler()
            }
        }
    }

    init(database: any DatabaseWriter, url: URL?) {
        self.database = database
        self.url = url
    }

    deinit {
        source?.cancel()
        timer?.cancel()
    }

    /// Whether the kernel tells this feed of other processes' commits (else the safety
    /// look does, every few seconds).
    package var isWatchedByTheKernel: Bool { queue.sync { kernelWatches } }

    /// Calls `handler` on `queue` after the history grew past `since` (the token the
    /// subscriber read up to), until the token is released or cancelled. `fallback` is the
    /// safety look's interval where the kernel cannot tell.
    package func subscribe(since: Int64?, queue: DispatchQueue, fallback: DispatchTimeInterval? = nil, _ handler: @escaping @Sendable () -> Void) -> ObservationToken {
        let id = UUID()
        let subscriber = Subscriber(queue: queue, fallback: fallback, handler: handler)
        let start = state.withLock { state -> Bool in
            state.subscribers[id] = subscriber
            defer { state.started = true }
            return !state.started
        }
        self.queue.sync {
            if start { startWatching() }
            updateTimer()
        }
        // A commit between the subscriber's reading of its starting token and now may have
        // been told to the others only: this one looks once if the token moved since.
        if let since, (try? database.read({ db in try PersistentStore.currentToken(db) })) != since { subscriber.tell() }
        return ObservationToken { [weak self] in
            guard let self else { return }
            state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            self.queue.async { self.updateTimer() }
        }
    }

    /// Asks for a look at the history's token (from any thread; cheap and coalesced).
    package func wake() {
        let schedule = state.withLock { state -> Bool in
            guard !state.lookScheduled else { return false }
            state.lookScheduled = true
            return true
        }
        if schedule { queue.async { self.look() } }
    }

    // MARK: On the feed's queue

    private func look() {
        state.withLock { $0.lookScheduled = false }
        guard let token = try? database.read({ db in try PersistentStore.currentToken(db) }) else { return }
        let subscribers = state.withLock { state -> [Subscriber] in
            guard token != state.token else { return [] }
            state.token = token
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.tell() }
    }

    /// The kernel says a file of the store was written. The write of a commit's last WAL
    /// frame comes a moment before the commit shows to readers (the writer then updates the
    /// WAL index, in shared memory, which inotify does not see): looked at now, and again
    /// after 2, 20, 200 and 1,000 ms (a writer descheduled in between, on a loaded machine)
    /// unless a later write took over.
    private func fileWritten() {
        writes &+= 1
        let write = writes
        look()
        for delay in [2, 20, 200, 1000] {
            queue.asyncAfter(deadline: .now() + .milliseconds(delay)) { [weak self] in
                guard let self, self.writes == write else { return }
                self.look()
            }
        }
    }

    private func startWatching() {
        state.withLock { state in
            state.token = (try? database.read { db in try PersistentStore.currentToken(db) }) ?? 0
        }
        // This process's writes, at commit.
        let observer = CommitObserver { [weak self] in self?.wake() }
        database.add(transactionObserver: observer, extent: .observerLifetime)
        self.observer = observer
        // Other processes' writes, told by the kernel.
        guard let url else { return }
        source = watchFolder(of: url)
        kernelWatches = source != nil && !Self.isRemoteFileSystem(url.deletingLastPathComponent().path)
    }

    /// An inotify watch on the store's folder, read by a dispatch source on the feed's
    /// queue; nil where inotify is not available.
    private func watchFolder(of url: URL) -> (any DispatchSourceRead)? {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_CLOSE_WRITE)
        guard inotify_add_watch(descriptor, url.deletingLastPathComponent().path, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        let name = url.lastPathComponent
        let names: Set<String> = [name, name + "-wal", name + "-journal"]
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in
            if Self.readEvents(descriptor, naming: names) { self?.fileWritten() }
        }
        source.setCancelHandler { close(descriptor) }
        source.resume()
        return source
    }

    /// Reads every pending inotify event; whether one was about the store's files.
    private static func readEvents(_ descriptor: Int32, naming names: Set<String>) -> Bool {
        var relevant = false
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
                    // Events were lost: the store's may be among them.
                    relevant = true
                } else if event.len > 0 {
                    let name = String(cString: buffer.advanced(by: nameStart).assumingMemoryBound(to: CChar.self))
                    if names.contains(name) { relevant = true }
                }
                offset = nameStart + Int(event.len)
            }
        }
        return relevant
    }

    /// NFS, SMB/CIFS, 9p and FUSE: inotify sees this machine's writes only. Read from
    /// `/proc/self/mounts`: the longest mount point that holds `path`.
    static func isRemoteFileSystem(_ path: String) -> Bool {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return false }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (point: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            // Spaces in mount points are written as \040.
            let point = fields[1].replacingOccurrences(of: "\\040", with: " ")
            guard resolved == point || resolved.hasPrefix(point == "/" ? "/" : point + "/") else { continue }
            if best == nil || point.count >= best!.point.count { best = (point, String(fields[2])) }
        }
        guard let type = best?.type else { return false }
        return ["nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs"].contains(type) || type.hasPrefix("fuse")
    }

    /// The safety look: only where the kernel does not tell, at the shortest interval a
    /// subscriber asked for.
    private func updateTimer() {
        timer?.cancel()
        timer = nil
        let fallbacks = state.withLock { $0.subscribers.values.map(\.fallback) }
        guard url != nil, !kernelWatches, !fallbacks.isEmpty else { return }
        let interval = fallbacks.compactMap { $0 }.min(by: { $0.nanoseconds < $1.nanoseconds }) ?? Self.fallbackInterval
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
        timer.setEventHandler { [weak self] in self?.look() }
        timer.resume()
        self.timer = timer
    }
}

/// Wakes the feed after each commit of the store's writer connection.
private final class CommitObserver: TransactionObserver, @unchecked Sendable {
    let committed: @Sendable () -> Void

    init(_ committed: @escaping @Sendable () -> Void) { self.committed = committed }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidCommit(_ db: Database) { committed() }
    func databaseDidRollback(_ db: Database) {}
}

extension DispatchTimeInterval {
    /// The interval in nanoseconds (`.never`: the largest).
    var nanoseconds: Int64 {
        switch self {
        case .seconds(let s): Int64(s) * 1_000_000_000
        case .milliseconds(let ms): Int64(ms) * 1_000_000
        case .microseconds(let us): Int64(us) * 1_000
        case .nanoseconds(let ns): Int64(ns)
        case .never: .max
        @unknown default: .max
        }
    }
}
