import Foundation
import Logging
import ObjectStore
import Synchronization

/// Where a shared store stands with its server.
///
/// ## Topics
/// - ``State-swift.enum``
/// - ``state``
/// - ``pendingChanges``
/// - ``rejectedChanges``
/// - ``Security``
/// - ``security``
/// - ``readOnlyReason``
/// - ``isReadOnly``
/// - ``Transfer``
/// - ``transfer``
public struct SharingStatus: Sendable, Hashable, CustomStringConvertible {
    /// How the connection to the server is secured (see ``ServerConfiguration/sslMode``).
    public enum Security: Sendable, Hashable, CustomStringConvertible {
        /// Not encrypted: what crosses the network, rows and all, can be read on the way.
        case plain
        /// Encrypted, but the server's certificate is not checked (`sslmode` `prefer` or
        /// `require`): another machine could pose as the server.
        case encrypted
        /// Encrypted, the server's certificate signed by a trusted authority (`verify-ca`).
        case verifiedAuthority
        /// Encrypted, the server's certificate signed by a trusted authority and made out to
        /// the host connected to (`verify-full`).
        case verifiedHost

        public var description: String {
            switch self {
            case .plain: return "not encrypted"
            case .encrypted: return "encrypted, the server not verified"
            case .verifiedAuthority: return "encrypted, the server's certificate verified"
            case .verifiedHost: return "encrypted, the server verified"
            }
        }
    }

    public enum State: Sendable, Hashable {
        /// Connecting (at the start, and after the server was unreachable).
        case connecting
        /// Connected: local commits are pushed as they happen, the server's pulled as they
        /// are committed.
        case connected
        /// The server cannot be reached (the reason says why): local commits wait in the
        /// store and go out when it can.
        case offline(reason: String)
        /// Taking the server's objects afresh, because changes this store needed were
        /// pruned from the server's log (it was away a long time).
        case resyncing
        /// ``SharingSession/stop()`` was called.
        case stopped
    }

    /// A long transfer under way: a big store's first push, say, which commits piece by
    /// piece and reports how far it got.
    public struct Transfer: Sendable, Hashable, CustomStringConvertible {
        public enum Direction: Sendable, Hashable {
            /// This store's changes going to the server.
            case sending
            /// The server's objects coming into this store.
            case taking
        }

        public var direction: Direction
        /// How many objects moved so far.
        public var done: Int
        /// How many objects move in all (as far as known now).
        public var total: Int

        /// How far it got, from 0 to 1.
        public var fraction: Double { total == 0 ? 1 : min(1, Double(done) / Double(total)) }

        public var description: String {
            let count = { (number: Int) in number.formatted(.number) }
            return "\(direction == .sending ? "sending" : "taking") \(count(done)) of \(count(total)) objects"
        }
    }

    public var state: State
    /// A long transfer under way; nil when there is none.
    public var transfer: Transfer? = nil
    /// How many objects have local changes the server does not have yet (known once a push
    /// was tried; 0 while connected and caught up).
    public var pendingChanges: Int
    /// The server, without a password.
    public var server: String
    /// How many changes were refused for not fitting the model and are not dismissed (see
    /// ``SharingSession/rejectedChanges(after:)``).
    public var rejectedChanges: Int = 0
    /// How the last connection to the server was secured; nil before the first.
    public var security: Security? = nil
    /// Why this desktop's changes are not sent to the server (its role may only read, or the
    /// server refused a push for permission); nil when they are. They stay in the store.
    public var readOnlyReason: String? = nil
    /// Whether this desktop's changes are not sent (see ``readOnlyReason``).
    public var isReadOnly: Bool { readOnlyReason != nil }

    public var description: String {
        let rejected = rejectedChanges == 0 ? "" : ", \(rejectedChanges) rejected"
        let secured = (security.map { " (\($0))" } ?? "") + (isReadOnly ? ", read-only" : "")
        switch state {
        case .connecting: return "connecting to \(server)"
        case .connected:
            let pending = transfer.map { ", \($0)" } ?? (pendingChanges == 0 ? "" : ", \(pendingChanges) pending")
            return "connected to \(server)\(pending)" + secured + rejected
        case .offline(let reason): return "offline, \(pendingChanges) pending\(rejected) (\(reason))"
        case .resyncing: return "resyncing from \(server)"
        case .stopped: return "stopped"
        }
    }
}

/// A store sharing its objects through a PostgreSQL database, made by
/// `PersistentStore.share(through:)`: it runs until ``stop()`` or until it is
/// released.
///
/// ## Topics
/// - ``status``
/// - ``statusUpdates()``
/// - ``synchronize()``
/// - ``conflicts()``
/// - ``dismissConflicts(through:)``
/// - ``rejectedChanges(after:)``
/// - ``dismissRejectedChanges(through:)``
/// - ``stop()``
public final class SharingSession: Sendable {
    let store: PersistentStore
    let sharing: PostgresSharing
    private let engine: SharingEngine
    private let state: Mutex<SessionState>
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    private struct SessionState {
        var status: SharingStatus
        var observers: [UUID: AsyncStream<SharingStatus>.Continuation] = [:]
    }

    init(store: PersistentStore, sharing: PostgresSharing) {
        self.store = store
        self.sharing = sharing
        state = Mutex(SessionState(status: SharingStatus(state: .connecting, pendingChanges: 0, server: sharing.configuration.description)))
        engine = SharingEngine(store: store, sharing: sharing)
        let engine = self.engine
        let update: @Sendable (SharingStatus) -> Void = { [weak self] status in self?.publish(status) }
        task.withLock { $0 = Task(executorPreference: engine.executor) { await engine.run(report: update) } }
    }

    deinit {
        task.withLock { $0?.cancel() }
        let observers = state.withLock { state in
            defer { state.observers = [:] }
            return Array(state.observers.values)
        }
        for continuation in observers { continuation.finish() }
    }

    /// Where the store stands now.
    public var status: SharingStatus { state.withLock { $0.status } }

    /// The status now, then each change of it, until the session stops.
    public func statusUpdates() -> AsyncStream<SharingStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SharingStatus.self, bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        state.withLock { state in
            continuation.yield(state.status)
            if state.status.state == .stopped { continuation.finish() } else { state.observers[id] = continuation }
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.observers.removeValue(forKey: id) } }
        return stream
    }

    private func publish(_ status: SharingStatus) {
        // Finished outside the lock: finishing runs `onTermination`, which takes it.
        let finished = state.withLock { state -> [AsyncStream<SharingStatus>.Continuation] in
            guard state.status != status else { return [] }
            state.status = status
            for continuation in state.observers.values { continuation.yield(status) }
            guard status.state == .stopped else { return [] }
            defer { state.observers = [:] }
            return Array(state.observers.values)
        }
        for continuation in finished { continuation.finish() }
    }

    /// Pulls and pushes now, and returns once every change committed on either side before
    /// the call went across (or throws why it could not: the server is unreachable, say).
    public func synchronize() async throws {
        try await engine.synchronize()
    }

    /// How many rounds the session ran (for tests and the benchmark).
    package func roundsRun() async -> Int {
        await engine.roundsRun
    }

    /// The objects the pushes' scans found to compare with their bases, for tests.
    package func objectsScanned() async -> Int {
        await engine.objectsScanned
    }

    /// The conflicts found and not dismissed, oldest first.
    public func conflicts() throws -> [SharingConflict] {
        try store.database.read { db in try SharingState.conflicts(in: db) }
    }

    /// Forgets the conflicts up to and including the numbered one.
    public func dismissConflicts(through number: Int64) throws {
        try store.database.write { db in
            try db.execute(sql: "DELETE FROM \(SharingState.conflictTable) WHERE number <= ?", arguments: [number])
        }
    }

    /// The changes refused for not fitting the model (from the server, or not sent to
    /// it) and not dismissed, oldest first; with `number`, only those after it.
    public func rejectedChanges(after number: Int64 = 0) throws -> [RejectedChange] {
        try store.database.read { db in try SharingState.rejectedChanges(after: number, in: db) }
    }

    /// Forgets the rejected changes up to and including the numbered one.
    public func dismissRejectedChanges(through number: Int64) throws {
        try store.database.write { db in
            try db.execute(sql: "DELETE FROM \(SharingState.rejectedTable) WHERE number <= ?", arguments: [number])
        }
        publish(state.withLock { state in
            var status = state.status
            status.rejectedChanges = (try? self.store.database.read { db in try SharingState.rejectedCount(in: db) }) ?? 0
            return status
        })
    }

    /// Stops pulling and pushing, and closes the connections. Local commits made later wait
    /// in the store for the next session.
    public func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
        publish(SharingStatus(state: .stopped, pendingChanges: status.pendingChanges, server: sharing.configuration.description,
                              rejectedChanges: status.rejectedChanges))
    }
}
