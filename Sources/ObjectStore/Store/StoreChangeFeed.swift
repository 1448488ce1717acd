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
///   file, the `sqlite3` shell) by the kernel: inotify watches on the store's files (for
///   their writes) and on its folder (for files made, moved or deleted) wake the feed when
///   the store file, its `-wal` or `-journal` is written, created, replaced or deleted (a
///   WAL checkpoint, a truncated or recreated WAL included); other files' writes in the
///   folder (another store's) do not.
///
/// Each wake-up reads one number, the history's newest token (`sqlite_sequence`), and
/// subscribers are told only when it moved. Wake-ups that come while a look is pending make
/// no second look; a file write is looked at again up to a second later, since a commit shows
/// to readers a moment after its last write (see `fileWritten()`). The kernel tells of this
/// process's own commits too: those writes, known by the files being as the commit left
/// them, make one late look, not a sequence (see `ownCommitEnded()`); the writes of a commit
/// itself are left unread until it ends, so that the kernel merges them into one event.
///
/// A slow safety look (every ``fallbackInterval`` or a subscriber's own) runs only where
/// the kernel cannot tell: no inotify (`inotify_init1` or the watch failed, say the
/// per-user watch limit was reached), or a store on a network or FUSE file system (NFS,
/// SMB/CIFS, FUSE: inotify there sees this machine's writes, not other machines').
///
/// A save of one of the store's contexts is also told once its context has published it
/// (``tellSubscribersOfLocalSave()``): every context takes its sibling's saves, with the keys
/// that changed, from the store's record, by this same route. A subscriber that does not
/// follow every commit (a context that does not follow the store) is told only of those,
/// and the feed watches nothing until a subscriber follows.
///
/// Subscribers are told on their own queue, one pending call each at most: a slow one
/// falls behind and catches up by reading the history, and never holds up a writer (a
/// commit only sets a flag and queues a look on the feed's queue).
package final class StoreChangeFeed: @unchecked Sendable {
    /// The store's connections: replaced when the file is (``reopen``).
    private let connections: Mutex<any DatabaseWriter>
    /// Opens the file at the store's path again, once another program replaced it (nil for
    /// in-memory and read-only stores, which do not follow a replaced file).
    private let reopen: (@Sendable () throws -> any DatabaseWriter)?
    /// How many times the file was replaced and opened again: a subscriber that saw another
    /// generation takes everything as changed.
    private let generationCount = Atomic<Int>(0)
    private let url: URL?
    private let queue = DispatchQueue(label: "ObjectStore.StoreChangeFeed")
    private let state = Mutex(State())

    /// The safety look's interval where the kernel cannot tell, unless a subscriber asks
    /// for a shorter one.
    static let fallbackInterval: DispatchTimeInterval = .seconds(2)

    private struct State {
        var subscribers: [UUID: Subscriber] = [:]
        var lookScheduled = false
        /// The newest token subscribers were told of.
        var token: Int64 = 0
    }

    // On the feed's queue only.
    private var observer: CommitObserver?
    private var folderWatch: ObservationToken?
    private var timer: (any DispatchSourceTimer)?
    /// Whether commits are watched (since the first subscriber that follows them).
    private var watching = false
    /// Whether the kernel tells of other processes' commits.
    private var kernelWatches = false
    /// The device and inode of the open file.
    private var fileIdentity: FileIdentity?
    /// When a replaced file may be tried again after a failed open.
    private var nextReopen = DispatchTime(uptimeNanoseconds: 0)
    /// The looks after a file write (see `fileWritten()`), where they are in their
    /// sequence of delays, and whether the file was written since the last.
    private var looks: (any DispatchSourceTimer)?
    private var lookStep = 0
    private var writtenSinceLook = false
    /// The late look after writes of this process's own commits (see `ownCommitEnded()`).
    private var lateLook: (any DispatchSourceTimer)?
    /// Set by the store's writer connection, at its commits (see `ownCommitEnded()`).
    private let ownCommits = Mutex(OwnCommits())

    private struct OwnCommits {
        /// Between the writer's commit hook and the end of its commit: its writes are under way.
        var committing = false
        /// Whether the kernel told of a write meanwhile: the commit's end decides whose it was.
        var writtenWhileCommitting = false
        /// The store's files as the writer's last commit left them.
        var filesAfter: StoreFiles?
    }

    fileprivate final class Subscriber: @unchecked Sendable {
        let queue: DispatchQueue
        /// Whether the subscriber is told of every commit (else only of the saves of this
        /// store's contexts, ``tellSubscribersOfLocalSave()``), and the safety look's interval
        /// it asks for where the kernel cannot tell (nil: the feed's).
        let following: Mutex<(Bool, DispatchTimeInterval?)>
        /// Whether the subscriber takes the saves of the store's contexts from their records
        /// (a context), so is told when each is published.
        let takesLocalSaves: Bool
        let handler: @Sendable () -> Void
        let pending = Atomic<Bool>(false)

        init(queue: DispatchQueue, following: Bool, fallback: DispatchTimeInterval?, takesLocalSaves: Bool, handler: @escaping @Sendable () -> Void) {
            self.queue = queue
            self.following = Mutex((following, fallback))
            self.takesLocalSaves = takesLocalSaves
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

    /// A subscription to the feed (``subscribe(since:queue:following:fallback:takingLocalSaves:_:)``): ends when
    /// cancelled or released.
    package final class Subscription: Sendable {
        private let token: ObservationToken
        private let subscriber: Subscriber
        private let feed: StoreChangeFeed

        fileprivate init(token: ObservationToken, subscriber: Subscriber, feed: StoreChangeFeed) {
            self.token = token
            self.subscriber = subscriber
            self.feed = feed
        }

        /// Tells the subscriber of every commit (`true`), with `fallback` as its safety
        /// look's interval, or only of the saves of this store's contexts (`false`).
        package func setFollowing(_ following: Bool, fallback: DispatchTimeInterval? = nil) {
            subscriber.following.withLock { $0 = (following, fallback) }
            feed.queue.sync { feed.followersChanged() }
            // A commit the feed looked at before this subscriber followed was told to the
            // others only: this one looks once.
            if following { subscriber.tell() }
        }

        /// Stops the subscription.
        package func cancel() { token.cancel() }
    }

    init(database: any DatabaseWriter, url: URL?, reopen: (@Sendable () throws -> any DatabaseWriter)? = nil) {
        connections = Mutex(database)
        self.url = url
        self.reopen = reopen
        fileIdentity = url.flatMap { Self.identity(ofFileAt: $0.path) }
    }

    /// The store's connections, to the file now at the store's path while the feed watches.
    package var database: any DatabaseWriter { connections.withLock { $0 } }

    /// How many times the store's file was replaced by another program (deleted, with its
    /// `-wal` and `-shm`, and made again) and opened again.
    package var generation: Int { generationCount.load(ordering: .acquiring) }

    /// The history's newest token as the feed last read it: the one its following
    /// subscribers were last told the history grew to. A subscriber told of a commit may
    /// take it rather than read the store again (the sharing engine does, at each commit);
    /// a commit after that look is told again, with its own.
    package var newestToken: Int64 { state.withLock(\.token) }

    deinit {
        // Released in the middle of a commit of the store's writer: its end, which would
        // have let the watcher read again, no longer reaches the feed.
        if ownCommits.withLock(\.committing) { FolderWatcher.shared?.releaseEvents() }
        folderWatch?.cancel()
        timer?.cancel()
        looks?.cancel()
        lateLook?.cancel()
    }

    /// Whether the kernel tells this feed of other processes' commits (else the safety
    /// look does, every few seconds).
    package var isWatchedByTheKernel: Bool { queue.sync { kernelWatches } }

    /// How many times the feed read the history's token so far: what following the store
    /// costs, each a read of one number.
    package var looksMade: Int { looksCount.load(ordering: .relaxed) }
    private let looksCount = Atomic<Int>(0)

    /// Calls `handler` on `queue` after the history grew past `since` (the token the
    /// subscriber read up to), until the subscription is cancelled or released. With
    /// `takingLocalSaves` (a context), also after each save of this store's contexts is
    /// published (``tellSubscribersOfLocalSave()``); with `following` false, only then, and
    /// the feed starts no watch for it. `fallback` is the safety look's interval where the
    /// kernel cannot tell.
    package func subscribe(since: Int64?, queue: DispatchQueue, following: Bool = true, fallback: DispatchTimeInterval? = nil,
                           takingLocalSaves: Bool = false, _ handler: @escaping @Sendable () -> Void) -> Subscription {
        let id = UUID()
        let subscriber = Subscriber(queue: queue, following: following, fallback: fallback, takesLocalSaves: takingLocalSaves, handler: handler)
        state.withLock { $0.subscribers[id] = subscriber }
        if following { self.queue.sync { followersChanged() } }
        // A commit between the subscriber's reading of its starting token and now may have
        // been told to the others only: this one looks once if the token moved since.
        if let since, (try? database.read({ db in try PersistentStore.currentToken(db) })) != since { subscriber.tell() }
        let token = ObservationToken { [weak self] in
            guard let self else { return }
            let removed = state.withLock { $0.subscribers.removeValue(forKey: id) }
            // The safety look's timer may change; weakly, so that the store's connections
            // close as soon as the store is released.
            if removed?.following.withLock(\.0) == true { self.queue.async { [weak self] in self?.followersChanged() } }
        }
        return Subscription(token: token, subscriber: subscriber, feed: self)
    }

    /// Tells the contexts, at once, that a context of this store published a save
    /// (``PersistentStore/publishLocalSave(_:changes:)``): they take its changes, with the
    /// keys that changed, from the store's record of it.
    package func tellSubscribersOfLocalSave() {
        for subscriber in state.withLock({ $0.subscribers.values.filter(\.takesLocalSaves) }) { subscriber.tell() }
    }

    /// Asks for a look at the history's token (from any thread; cheap and coalesced).
    private func wake() {
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
        // Another file at the store's path, once it is a store of this model: this process
        // goes on with it. Until then (or when it cannot be opened) the old file is followed.
        if fileWasReplaced(), reopenFile() { return }
        // One statement, so no transaction around it: GRDB prepares `BEGIN` and `COMMIT`
        // anew for each read, and looks are frequent.
        looksCount.add(1, ordering: .relaxed)
        guard let token = try? database.unsafeRead({ db in try PersistentStore.currentToken(db) }) else { return }
        let subscribers = state.withLock { state -> [Subscriber] in
            guard token != state.token else { return [] }
            state.token = token
            return state.subscribers.values.filter { $0.following.withLock(\.0) }
        }
        for subscriber in subscribers { subscriber.tell() }
    }

    /// The kernel says a file of the store was written. A commit shows to readers a moment
    /// after its last WAL write: the writer may first sync the WAL to disk (the `sqlite3`
    /// shell does, `synchronous=FULL`: several milliseconds) and then updates the WAL index,
    /// in shared memory, which inotify does not see. So the feed looks now and again after
    /// 1, 2, 4, ... up to 1,024 ms (a writer descheduled on a loaded machine), each a
    /// read of one number; a later write starts the sequence again.
    private func fileWritten() {
        // This process's own commit: under way (the end of it decides), or ended and the
        // files still as it left them.
        let own = ownCommits.withLock { own in
            if own.committing { own.writtenWhileCommitting = true }
            return (own.committing, own.filesAfter)
        }
        if own.0 { return }
        if let filesAfter = own.1, filesAfter == StoreFiles(url) {
            if looks == nil { lookLate() }
            return
        }
        guard let looks else {
            look()
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.lookAgain() }
            timer.schedule(deadline: .now() + .milliseconds(Self.lookDelays[0]))
            timer.resume()
            (self.looks, lookStep, writtenSinceLook) = (timer, 0, false)
            return
        }
        // Looks under way: the next within a millisecond. A big transaction's many page
        // writes re-arm one timer a millisecond at most, not eleven a write.
        writtenSinceLook = true
        if lookStep > 0 {
            lookStep = 0
            looks.schedule(deadline: .now() + .milliseconds(Self.lookDelays[0]))
        }
    }

    /// One look of the sequence `fileWritten()` started, and the next scheduled: from the
    /// first delay again when the file was written meanwhile.
    private func lookAgain() {
        look()
        lookStep = writtenSinceLook ? 0 : lookStep + 1
        writtenSinceLook = false
        guard lookStep < Self.lookDelays.count else {
            looks?.cancel()
            looks = nil
            return
        }
        looks?.schedule(deadline: .now() + .milliseconds(Self.lookDelays[lookStep]))
    }

    /// The milliseconds between the looks after a file write.
    private static let lookDelays = [1, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512]

    /// The store's writer connection began to commit (its commit hook): the writes the
    /// kernel tells of until it ends may be its own. The process's watcher leaves them
    /// unread meanwhile (``FolderWatcher/holdEvents()``): the kernel merges the thousands a
    /// big commit makes (a join's page) into one, read at the commit's end.
    fileprivate func ownCommitBegan() {
        let began = ownCommits.withLock { own in
            defer { own.committing = true }
            return !own.committing
        }
        if began { FolderWatcher.shared?.holdEvents() }
    }

    /// The store's writer connection ended a commit (`committed`) or a rollback. A commit
    /// of this process needs no sequence of looks: the feed looked when it ended (`wake()`),
    /// once it showed to readers. So the files are noted as it left them (a `stat` each),
    /// and the kernel's word of a write, while they are still so, makes one late look only,
    /// a second later (`lookLate()`).
    ///
    /// That late look is for another process's write that is taken for this process's,
    /// and whose commit shows late: one made in the moment between this commit's end and
    /// the `stat`s (they include it), or one in the same tick of the file system's clock
    /// that leaves the sizes as they were (a WAL begun again from its start). Any other
    /// write changes a size or a time, and makes the whole sequence.
    fileprivate func ownCommitEnded(committed: Bool) {
        let files = StoreFiles(url)
        let (began, written) = ownCommits.withLock { own in
            defer { (own.committing, own.writtenWhileCommitting) = (false, false) }
            if committed { own.filesAfter = files }
            return (own.committing, own.writtenWhileCommitting)
        }
        // (A transaction rolled back before it began to commit held nothing.)
        if began { FolderWatcher.shared?.releaseEvents() }
        if written { queue.async { [self] in fileWritten() } }
        if committed { wake() }
    }

    /// One look, a second after the first of this process's own writes since the last
    /// late look (see `ownCommitEnded(committed:)`).
    private func lookLate() {
        guard lateLook == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in
            self?.lateLook = nil
            self?.look()
        }
        timer.schedule(deadline: .now() + .milliseconds(Self.lookDelays.reduce(0, +)))
        timer.resume()
        lateLook = timer
    }

    /// The size, modification time and identity of the store's file, its `-wal` and its
    /// `-journal`: a write to one changes it (see `ownCommitEnded(committed:)`).
    private struct StoreFiles: Equatable {
        var files: [stat.Snapshot?]

        init?(_ url: URL?) {
            guard let path = url?.path else { return nil }
            files = ["", "-wal", "-journal"].map { stat.Snapshot(path: path + $0) }
        }
    }

    /// Whether another file is now at the store's path (a deleted file is not yet replaced:
    /// the open connections go on with it until a new one is made).
    private func fileWasReplaced() -> Bool {
        guard reopen != nil, let url, let opened = fileIdentity, let now = Self.identity(ofFileAt: url.path) else { return false }
        return now != opened
    }

    /// Opens the new file, makes the store's connections its own (this process's later
    /// writes go there), and tells every subscriber: what they held came from the old file.
    /// A file that cannot be taken yet (empty or half made, another model, still being
    /// written) is tried again at a later event, not sooner than a second after.
    private func reopenFile() -> Bool {
        guard let reopen, let url, DispatchTime.now() >= nextReopen else { return false }
        nextReopen = .now() + .seconds(1)
        // The same file before and after the open: not one that another replaced meanwhile.
        let before = Self.identity(ofFileAt: url.path)
        guard let reopened = try? reopen(), let before, Self.identity(ofFileAt: url.path) == before else { return false }
        connections.withLock { $0 = reopened }
        fileIdentity = before
        if let observer { reopened.add(transactionObserver: observer, extent: .observerLifetime) }
        generationCount.add(1, ordering: .releasing)
        let token = (try? reopened.read { db in try PersistentStore.currentToken(db) }) ?? 0
        let subscribers = state.withLock { state in
            state.token = token
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.tell() }
        return true
    }

    private struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    private static func identity(ofFileAt path: String) -> FileIdentity? {
        stat.Snapshot(path: path).map { FileIdentity(device: $0.device, inode: $0.inode) }
    }

    /// Starts watching when the first subscriber follows every commit (once), and sets the
    /// safety look's timer.
    private func followersChanged() {
        if !watching, state.withLock({ $0.subscribers.values.contains { $0.following.withLock(\.0) } }) {
            watching = true
            startWatching()
        }
        updateTimer()
    }

    private func startWatching() {
        state.withLock { state in
            state.token = (try? database.read { db in try PersistentStore.currentToken(db) }) ?? 0
        }
        // This process's writes, at commit.
        let observer = CommitObserver(feed: self)
        database.add(transactionObserver: observer, extent: .observerLifetime)
        self.observer = observer
        // Other processes' writes, told by the kernel.
        guard let url else { return }
        folderWatch = FolderWatcher.shared?.watch(url) { [weak self] in
            guard let self else { return }
            self.queue.async { self.fileWritten() }
        }
        kernelWatches = folderWatch != nil && !Self.isRemoteFileSystem(url.deletingLastPathComponent().path)
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
        let fallbacks = state.withLock { $0.subscribers.values.compactMap { subscriber in
            subscriber.following.withLock { $0.0 ? .some($0.1) : nil }
        } }
        guard url != nil, !kernelWatches, !fallbacks.isEmpty else { return }
        let interval = fallbacks.compactMap { $0 }.min(by: { $0.nanoseconds < $1.nanoseconds }) ?? Self.fallbackInterval
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
        timer.setEventHandler { [weak self] in self?.look() }
        timer.resume()
        self.timer = timer
    }
}

/// Tells the feed when a commit of the store's writer connection begins and ends (it wakes
/// the feed after each).
private final class CommitObserver: TransactionObserver, @unchecked Sendable {
    weak var feed: StoreChangeFeed?

    init(feed: StoreChangeFeed) { self.feed = feed }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseWillCommit() throws { feed?.ownCommitBegan() }
    func databaseDidCommit(_ db: Database) { feed?.ownCommitEnded(committed: true) }
    func databaseDidRollback(_ db: Database) { feed?.ownCommitEnded(committed: false) }
}

extension stat {
    /// What a write to a file changes: its size and modification time (to the
    /// nanosecond the file system keeps), with its device and inode. Not the change
    /// time: SQLite changes a file's attributes too, which the kernel does not tell of.
    struct Snapshot: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var seconds: Int
        var nanoseconds: Int

        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            (device, inode, size) = (UInt64(info.st_dev), UInt64(info.st_ino), Int64(info.st_size))
            (seconds, nanoseconds) = (info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
        }
    }
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
