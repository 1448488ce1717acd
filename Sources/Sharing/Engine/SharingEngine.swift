import Foundation
import GRDB
import Logging
import ObjectStore
import PostgresNIO

/// The work of a ``SharingSession``: one round at a time (connect and join if needed, pull
/// everything committed, push everything local), started by a wake-up of the server's
/// listener, a local commit, the safety timer or ``synchronize()``; several wake-ups during
/// a round make one more round.
///
/// It runs on one event loop's thread, with its connections and every task it starts (see
/// ``EngineExecutor``).
actor SharingEngine {
    nonisolated let executor = EngineExecutor.take()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.serialExecutor }
    let store: PersistentStore
    let sharing: PostgresSharing
    let model: Model
    let log: ServerChangeLog
    let writer: ServerWriter
    let outbox: Outbox
    let roundLock: RoundLock
    var logger: Logger { sharing.logger }

    private var connection: PostgresConnection?
    private var connectionNumber = 0
    let wake: AsyncStream<Void>.Continuation
    private let wakeUps: AsyncStream<Void>
    /// Callers of ``synchronize()`` waiting for the next round to end.
    private var waiters: [CheckedContinuation<Void, any Error>] = []
    private var report: (@Sendable (SharingStatus) -> Void)?
    var pending = 0
    private var lastPrune = ContinuousClock.now - .seconds(3600)
    /// Rounds that failed in a row, and when the next may try to connect.
    private var failures = 0
    private var retryAt: ContinuousClock.Instant?
    private var retryTask: Task<Void, Never>?
    private var lastState: SharingStatus.State = .connecting
    /// How the current (or last) connection is secured.
    private var security: SharingStatus.Security?
    /// Whether this desktop's changes are sent over the current connection.
    var permission = PushPermission()
    /// The last refusal or read-only reason logged: each is logged once, not every round.
    private var lastReasonLogged: String?
    /// The history that wakes no round: the engine's own writes and what its pushes sent.
    private(set) var quiet = QuietHistory()
    /// The history tokens of the engine's own write transactions that a push's scan may
    /// meet, oldest first: rows taken from the server, each equal to its new base, which
    /// the scan need not read again (``Outbox/scan(everything:excluding:in:)``). An object
    /// also edited here is scanned for its edit. A desktop that follows others otherwise
    /// read every row it took in once more for its next push: three rows for each it sent,
    /// following the firehose. Kept in memory for the engine's life, at most a few hundred;
    /// a range not kept only makes a scan read its objects, as before.
    private(set) var ownWrites: [ClosedRange<Int64>] = []
    /// Rounds run, for tests.
    private(set) var roundsRun = 0
    /// The objects the push's scans found to compare with their bases, for tests.
    private(set) var objectsScanned = 0

    /// Counts the objects a push's scan found (``objectsScanned``).
    func scanned(_ count: Int) {
        objectsScanned += count
    }

    /// Logs `reason` unless it is the last one logged.
    func logOnce(_ reason: String, level: Logger.Level) {
        guard reason != lastReasonLogged else { return }
        lastReasonLogged = reason
        logger.log(level: level, "sharing: \(reason)")
    }

    init(store: PersistentStore, sharing: PostgresSharing) {
        self.store = store
        self.sharing = sharing
        model = store.model
        log = ServerChangeLog(model: store.model, limits: sharing.limits)
        writer = ServerWriter(model: store.model, policy: sharing.mergePolicy, logger: sharing.logger)
        outbox = Outbox(store: store, limits: sharing.limits)
        roundLock = RoundLock(store: store.url)
        (wakeUps, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    deinit {
        executor.giveBack()
    }

    /// Runs rounds until the task is cancelled.
    func run(report: @escaping @Sendable (SharingStatus) -> Void) async {
        self.report = report
        let wake = self.wake
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listen() }
            group.addTask { await self.watchLocalCommits() }
            group.addTask { await self.watchRounds() }
            group.addTask {
                // A round now, then after each wake-up; retries after a failure.
                wake.yield()
                for await _ in self.wakeUps {
                    if Task.isCancelled { break }
                    await self.runRound()
                }
                await self.roundsEnded()
            }
            while !Task.isCancelled {
                if (try? await Task.sleep(for: .seconds(3600))) == nil { break }
            }
            wake.finish()
            group.cancelAll()
        }
        retryTask?.cancel()
        await closeConnection()
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
        waiters = []
    }

    private func notice(_ message: String) {
        logger.notice("sharing: \(message)")
    }

    func synchronize() async throws {
        try await withCheckedThrowingContinuation { continuation in
            waiters.append(continuation)
            wake.yield()
        }
    }

    // MARK: Rounds

    private func runRound() async {
        // Offline: until the next try, a wake-up (a local commit) only counts what waits.
        if let retryAt, ContinuousClock.now < retryAt, waiters.isEmpty {
            pending = (try? await countPending()) ?? pending
            status(lastState)
            return
        }
        let waiting = waiters
        waiters = []
        do {
            try await roundWithWatchdog()
            transfer = nil
            failures = 0
            retryAt = nil
            status(.connected)
            guard pulledEverything else {
                // Pushed between pages: the next round takes the rest, and then the
                // synchronization asked for is done.
                waiters = waiting + waiters
                wake.yield()
                return
            }
            for waiter in waiting { waiter.resume() }
        } catch {
            await closeConnection()
            transfer = nil
            let refusal = sharing.configuration.refusal(error)
            let reason = refusal.map { "\($0)" } ?? Self.reason(error)
            if refusal != nil { logOnce(reason, level: .error) } else if failures == 0 { logger.info("sharing: \(reason)") }
            pending = (try? await countPending()) ?? pending
            status(.offline(reason: reason))
            for waiter in waiting { waiter.resume(throwing: refusal ?? error) }
            // Try again later, waiting longer after each failure (up to 30 s, or the delay
            // itself when it is longer; 5 minutes when the server refused us: its settings
            // or ours must change first); a synchronize() call, or the listener connecting
            // again, tries at once.
            failures += 1
            let longest = refusal == nil ? Self.longestRetryDelay : Self.refusalRetryDelay
            let delay = min(sharing.reconnectDelay * (1 << min(failures - 1, 10)), max(sharing.reconnectDelay, longest))
            retryAt = ContinuousClock.now + delay
            retryTask?.cancel()
            let wake = self.wake
            retryTask = Task(executorPreference: executor) {
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                wake.yield()
            }
        }
    }

    /// The longest wait between tries to reach a server that does not answer, and between
    /// tries to connect to one that refused the connection (TLS, a password).
    static let longestRetryDelay: Duration = .seconds(30)
    static let refusalRetryDelay: Duration = .seconds(300)

    /// How long a round may go without progress (a page pulled, a chunk pushed) before it
    /// is given up: postgres-nio 1.33 can leave a query's rows unfinished forever when the
    /// server ends the connection while they arrive (`pg_terminate_backend`), and a round
    /// waiting on them would stop every later one, and the session's `stop()`.
    static let stallLimit: Duration = .seconds(20)

    /// Runs a round in a task of its own, given up (and its connection dropped) when it
    /// makes no progress for ``stallLimit``; while no other process runs a round on the
    /// store file (see ``RoundLock``).
    private func roundWithWatchdog() async throws {
        let held = await roundLock.acquire()
        defer { held?.release() }
        roundsRun += 1
        progress = .now
        let outcome = Outcome()
        let work = Task(executorPreference: executor) {
            do { try await self.round(); outcome.resume(nil) } catch { outcome.resume(error) }
        }
        roundUnderWay = (work, outcome)
        defer { roundUnderWay = nil }
        roundStarted?.resume()
        roundStarted = nil
        try await outcome.value()
    }

    /// Whether the last round's pull took every change of the server's log, or left pages
    /// for the next round (see ``pullAll(on:)``).
    private var pulledEverything = true
    /// The round under way: its work, and what `roundWithWatchdog()` waits on.
    private var roundUnderWay: (work: Task<Void, Never>, outcome: Outcome)?
    /// Whether the rounds ended (the engine stopped, and its last round ended).
    private var roundsOver = false

    /// The watchdog (``watchRounds()``) waiting for a round to start: resumed when one
    /// starts, or when the rounds end.
    private var roundStarted: CheckedContinuation<Void, Never>?

    private func roundsEnded() {
        roundsOver = true
        roundStarted?.resume()
        roundStarted = nil
    }

    /// Gives up the round under way once it made no progress for ``stallLimit``: looked at
    /// every second by one task for the engine's life, not by one for each round (a
    /// desktop following others runs many rounds a second), and only while a round is under
    /// way. Between rounds it waits for the next one to start: looking every second, an idle
    /// shared window's engine woke three threads five or six times a second.
    ///
    /// It watches until the rounds end, not until the engine is cancelled: `stop()` waits
    /// for the round under way, and one the server stopped answering would hold it for good.
    private func watchRounds() async {
        while !roundsOver {
            guard roundUnderWay != nil else {
                await withCheckedContinuation { roundStarted = $0 }
                continue
            }
            // A second, cancelled or not.
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + 1) { continuation.resume() }
            }
            guard let round = roundUnderWay, !round.outcome.isResumed, ContinuousClock.now - progress > Self.stallLimit else { continue }
            notice("a round made no progress for \(Self.stallLimit); giving it up")
            round.work.cancel()
            round.outcome.resume(RoundStalled())
            await closeConnection()
        }
    }

    private var progress = ContinuousClock.now
    /// A long transfer under way in this round, and when it was last reported.
    private var transfer: SharingStatus.Transfer?
    private var transferReported = ContinuousClock.now
    /// Objects sent in this round (the join's first pass included).
    var sentInRound = 0

    func sent(_ count: Int) { sentInRound += count }

    /// Reports how far a long transfer got (at most every quarter second), connected.
    func report(_ transfer: SharingStatus.Transfer) {
        self.transfer = transfer
        guard ContinuousClock.now - transferReported >= .milliseconds(250) else { return }
        transferReported = .now
        status(.connected)
    }

    func madeProgress() { progress = .now }

    private func round() async throws {
        sentInRound = 0
        // A round's first report of a transfer is not held back.
        transferReported = .now - .seconds(1)
        logger.trace("sharing: round: connecting")
        let connection = try await connected()
        madeProgress()
        logger.trace("sharing: round: pulling")
        let pull = try await pullAll(on: connection)
        pulledEverything = pull.caughtUp
        logger.trace("sharing: round: pushing")
        try await pushUnlessReadOnly(on: connection, from: pull.pushStart)
        logger.trace("sharing: round: done")
        // Not after a round that sent anything: this store's cursor is still before what it
        // sent (the next round's pull passes over it), and a push of more changes than the
        // log keeps, pruned now, would make the store resync, taking every object back.
        if sentInRound == 0, pull.caughtUp, ContinuousClock.now - lastPrune > .seconds(300) {
            lastPrune = .now
            // Only a role that may delete from the log prunes it (the schema's owner, say);
            // never past what this store took (see the prune's `notPast`).
            do {
                let cursor = try readNow { db in try SharingState.cursor(in: db) ?? .start }
                try await log.prune(keepingLast: sharing.logLimit, notPast: cursor, on: connection, logger: logger)
            } catch where serverError(error)?.sqlState == Self.insufficientPrivilege {
                logger.debug("sharing: this role may not prune the change log; its owner's desktops do")
            }
        }
    }

    func status(_ state: SharingStatus.State) {
        lastState = state
        // One statement: no transaction around it.
        let rejected = (try? store.database.unsafeRead { db in try SharingState.rejectedCount(in: db) }) ?? 0
        report?(SharingStatus(state: state, transfer: transfer, pendingChanges: pending, server: sharing.configuration.description, rejectedChanges: rejected,
                              security: security, readOnlyReason: permission.readOnlyReason))
    }

    private static func reason(_ error: any Error) -> String {
        // The server's message, also from inside a transaction (`PostgresTransactionError`).
        if let (_, message) = serverError(error) { return message }
        if let error = error as? PSQLError { return "cannot reach the server (\(error.code))" }
        if let error = error as? PostgresTransactionError, let inner = error.closureError ?? error.beginError ?? error.commitError {
            return reason(inner)
        }
        return String(describing: error)
    }

    /// Closes the connection without waiting for it: closing one the server already cut
    /// can wait forever.
    private func closeConnection() async {
        if let connection { Task(executorPreference: executor) { try? await connection.close() } }
        connection = nil
    }

    // MARK: Connecting and joining

    /// The open connection, or a new one: the schema made, the store joined or resynced.
    private func connected() async throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        if connection != nil { await closeConnection() }
        // Not while offline: each try would flip the status, and its lines, back and forth.
        if case .offline = lastState {} else { status(.connecting) }
        connectionNumber += 1
        let connection = try await PostgresConnection.connect(on: executor.eventLoop, configuration: try sharing.configuration.connection,
                                                              id: connectionNumber, logger: logger)
        do {
            // A round never waits long on the server: a lock held by a desktop that hangs
            // ends the statement with an error, and the round is tried again.
            try await connection.query("SET lock_timeout = '10s'", logger: logger)
            try await connection.query("SET statement_timeout = '60s'", logger: logger)
            security = try await SharingStatus.Security(of: connection, configuration: sharing.configuration, logger: logger)
            logger.trace("sharing: round: creating the schema")
            try await ServerSchema(model: model).create(on: connection, logger: logger)
            if try await mayWrite(on: connection) {
                permission.allow()
            } else {
                refusePushes("\(sharing.configuration.username) may only read the shared list on this server", level: .notice)
            }
            let identity = try await log.identity(on: connection, logger: logger) ?? ""
            let known = try await store.database.read { db in try SharingState.value(.serverIdentity, in: db) }
            if known != identity {
                if known != nil {
                    logger.notice("sharing: \(sharing.configuration) is another database than the one this store shared with; joining it afresh")
                    try await forgetServer()
                }
                try await join(on: connection, identity: identity)
            }
            self.connection = connection
            return connection
        } catch {
            Task(executorPreference: executor) { try? await connection.close() }
            throw error
        }
    }

    /// Forgets what the store knew of another database: its bases and cursor. Global IDs stay.
    private func forgetServer() async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM \(SharingState.baseTable)")
            try db.execute(sql: "DELETE FROM \(SharingState.referenceTable)")
            for key in [SharingState.Key.serverIdentity, .cursor, .pushedThrough, .pushInFlight, .takenPushes] { try SharingState.set(key, nil, in: db) }
        }
    }

    // MARK: Wake-ups

    private func listen() async {
        let listener = ServerListener(configuration: sharing.configuration, reconnectDelay: sharing.reconnectDelay,
                                      safetyInterval: sharing.safetyInterval, logger: logger,
                                      eventLoop: executor.eventLoop, executor: executor)
        for await event in listener.events() {
            switch event {
            case .disconnected(let reason):
                logger.debug("sharing: listener: \(reason)")
            case .connected:
                // The server answers (again): no need to wait for the next try.
                retryAt = nil
            default:
                break
            }
            wake.yield()
        }
    }

    /// Wakes a round whenever the store's history grows (any writer on the file): told by
    /// the store's change feed, at this process's commits and, through inotify, at other
    /// processes'; `localInterval` is its safety look where the kernel cannot tell.
    private func watchLocalCommits() async {
        let (commits, committed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let fallback = DispatchTimeInterval.nanoseconds(Int(sharing.localInterval / .nanoseconds(1)))
        let subscription = store.feed.subscribe(since: nil, queue: .global(), fallback: fallback) { committed.yield() }
        for await _ in commits {
            // The engine's own commits (a pull's page taken in, a push's end) need no round.
            // The token is the one the feed read to tell of the commit: no read of the store
            // for each (a desktop following others is told of each page it takes).
            if !quiet.needsRound(at: store.feed.newestToken) { continue }
            wake.yield()
        }
        subscription.cancel()
    }

    /// Runs `updates` in a write transaction of the store, as every write of the engine
    /// does: the history it records is the engine's own (see ``QuietHistory``).
    func write<T: Sendable>(_ updates: @Sendable (Database) throws -> T) async throws -> T {
        let (result, before, after) = try await store.database.write { db in
            let before = try PersistentStore.currentHistoryToken(in: db)
            let result = try updates(db)
            return (result, before, try PersistentStore.currentHistoryToken(in: db))
        }
        wrote(from: before, to: after)
        return result
    }

    /// ``write(_:)`` on the engine's thread, for a round's pulled page: GRDB's asynchronous
    /// write hops to the store's writer queue and back, two thread switches, for each change
    /// a desktop follows. The engine's loop waits meanwhile (for a writer busy with another
    /// save, too), so writes that overlap with reading the server (a join's pages) use
    /// ``write(_:)``. As that one, it starts no write in a cancelled task.
    func writeNow<T>(_ updates: (Database) throws -> T) throws -> T {
        try Task.checkCancellation()
        let (result, before, after) = try store.database.write { db in
            let before = try PersistentStore.currentHistoryToken(in: db)
            let result = try updates(db)
            return (result, before, try PersistentStore.currentHistoryToken(in: db))
        }
        wrote(from: before, to: after)
        return result
    }

    /// Runs `body` (isolated to the engine, on its thread) with the cooperative pool as the
    /// preferred executor of the nonisolated work it starts: a snapshot's next page is read
    /// and decoded there while the engine takes the last one in, as before the engine had a
    /// thread of its own, rather than on the engine's thread beside the connection's reads.
    func onThePool<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(globalConcurrentExecutor) { try await body() }
    }

    /// A short read of the store on the calling thread: GRDB's asynchronous read hops to
    /// a reader's queue and back, two thread switches, for reads of a few rows that each
    /// round makes.
    ///
    /// Its statements run outside a transaction (GRDB's `unsafeRead`): beginning and
    /// committing one was most of a pull's read of its cursor, and a read of the sharing
    /// state needs none. Only a round writes that state, and no other round runs meanwhile
    /// (this engine runs one at a time, ``RoundLock`` keeps other processes' out); what a
    /// save changes in between two statements (a global ID, the history's newest token) is
    /// read as it is at each.
    nonisolated func readNow<T>(_ value: (Database) throws -> T) throws -> T {
        try store.database.unsafeRead(value)
    }

    /// A write transaction of the engine moved the history from `before` to `after`: every
    /// entry in between is its own (SQLite runs one write transaction at a time).
    private func wrote(from before: Int64, to after: Int64) {
        quiet.wrote(from: before, to: after)
        guard after > before else { return }
        // Right after the last one (no other writer's commit between them): one range.
        if let last = ownWrites.last, last.upperBound == before {
            ownWrites[ownWrites.count - 1] = last.lowerBound...after
        } else {
            ownWrites.append((before + 1)...after)
            // (Each is a term of the scan's query: SQLite nests at most 1,000.)
            if ownWrites.count > 256 { ownWrites.removeFirst(ownWrites.count - 256) }
        }
    }

    /// A push's scan sent every local change up to and including the history token `token`.
    func sentHistory(through token: Int64) {
        quiet.sent(through: token)
        // The next scan starts after it.
        ownWrites.removeAll { $0.upperBound <= token }
    }
}

extension ServerWriter.Written {
    /// The fields the push wrote of `operation`: every field of an insert; the changed
    /// fields of an update that the server now holds as sent (a conflict the server won
    /// keeps its base, so that the merge reports it).
    func sentKeys(of operation: Outbox.Operation) -> [String] {
        guard let values else { return [] }
        return operation.changedKeys.filter { values[$0] == operation.values[$0] }
    }
}

/// A round given up for making no progress.
struct RoundStalled: Error, CustomStringConvertible {
    var description: String { "the server stopped answering in the middle of a round" }
}

/// Resumes a continuation once, from whichever comes first.
private final class Outcome: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, any Error>?
    /// The first outcome, until ``value()`` takes it.
    private var result: Result<Void, any Error>?
    private var resumed = false

    var isResumed: Bool { lock.withLock { resumed } }

    /// Waits for the first ``resume(_:)`` (at once if it came already).
    func value() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let came: Result<Void, any Error>? = lock.withLock {
                if result == nil { self.continuation = continuation }
                return result
            }
            if let came { continuation.resume(with: came) }
        }
    }

    /// Ends ``value()`` with success (nil) or `error`; later calls do nothing.
    func resume(_ error: (any Error)?) {
        let outcome: Result<Void, any Error> = error.map { .failure($0) } ?? .success(())
        let continuation: CheckedContinuation<Void, any Error>? = lock.withLock {
            guard !resumed else { return nil }
            resumed = true
            if self.continuation == nil { result = outcome }
            return self.continuation
        }
        continuation?.resume(with: outcome)
    }
}
