import Foundation
import GRDB
import Logging
import ObjectStore

/// How a store shares its objects through a PostgreSQL database: where the database is, and
/// what to do when two desktops change the same field.
///
/// ```swift
/// let store = try PersistentStore(url: storeURL, model: model)
/// let sharing = try store.share(through: PostgresSharing(try ServerConfiguration(url: "postgresql://me@db.example/league")))
/// for await status in sharing.statusUpdates() { print(status) }   // connected, offline (3 pending), …
/// ```
///
/// ## Topics
/// - ``init(_:mergePolicy:)``
/// - ``configuration``
/// - ``mergePolicy``
/// - ``logLimit``
/// - ``limits``
public struct PostgresSharing: Sendable {
    /// The server and database.
    public var configuration: ServerConfiguration
    /// What a conflict keeps (see ``SharingConflict``): `MergePolicy.error` (the default)
    /// and `MergePolicy.storeWins` keep the value committed first on the server;
    /// `MergePolicy.editWins` writes this store's value over it. Every conflict is
    /// recorded, whatever the policy.
    public var mergePolicy: MergePolicy
    /// How many changes the server's log keeps: a desktop prunes it to that many every five
    /// minutes, at the end of a round that sent nothing and took every change (its cursor
    /// past its own pushes, which a prune right after them would make it resync for; a
    /// store's first push may hold more changes than the log keeps). A desktop that was away
    /// for longer resyncs from the tables ("Resyncing…") instead of pulling. A change takes
    /// about 120 (a delete) to 320 (an insert) bytes of the server's disk while the log keeps
    /// it: the default is 25–32 MB. Each prune forgets the deletes too, keeping only their
    /// highest version.
    public var logLimit: Int = 100_000
    /// The largest value and row taken from the server; larger ones are refused as a
    /// ``RejectedChange``.
    public var limits = SharingLimits()
    /// How many tombstones of deleted objects one local transaction forgets at most (see
    /// `Tombstones`): a round forgets a few such batches and wakes another for the rest.
    package var tombstonesPerTransaction = Tombstones.pruneLimit
    /// How many changes of the server's log a pull asks for at once: a page, merged in one
    /// local transaction.
    package var pullPageSize = 1000
    /// How many pages a round pulls at most before it pushes this desktop's own changes
    /// and goes on in another round: a desktop far behind (others writing thousands of
    /// changes a second) sends its edits while it catches up, not after.
    package var pullPagesPerRound = 5
    /// How long to wait before connecting again after the server could not be reached.
    public var reconnectDelay: Duration = .seconds(1)
    /// How often to pull even without a notification, in case one was lost.
    public var safetyInterval: Duration = .seconds(30)
    /// How often to look for local commits where the kernel cannot say that the store's
    /// file changed (no inotify, or a network or FUSE file system). Elsewhere nothing is
    /// looked for: the store's change feed tells the engine of every commit as it happens
    /// (see `PersistentStore.observeChanges(on:_:)`).
    public var localInterval: Duration = .seconds(2)
    /// Where the engine logs (connections, pushes, pulls; never a password): warnings only,
    /// unless `FETCHED_RESULTS_SHARING_LOG` names another level (`info`, `debug`, `trace`).
    public var logger: Logger = {
        var logger = Logger(label: "FetchedResults.Sharing")
        logger.logLevel = ProcessInfo.processInfo.environment["FETCHED_RESULTS_SHARING_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }()

    /// Sharing through the database `configuration` names.
    public init(_ configuration: ServerConfiguration, mergePolicy: MergePolicy = .error) {
        self.configuration = configuration
        self.mergePolicy = mergePolicy
    }
}

extension PersistentStore {
    /// Starts sharing the store's objects through a PostgreSQL database, and remembers it:
    /// ``sharingServer()`` names it until ``stopSharing()``.
    ///
    /// The returned session connects in the background (creating the server's tables on
    /// first use), takes the server's objects when the database already holds some and this
    /// store holds only its initial contents (``holdsOnlyInitialContents()``), else pushes
    /// this store's objects once; then it pulls every change committed on the server into
    /// the store (one local transaction per server transaction, so contexts following the
    /// store see each as one batch) and pushes every local commit, whoever made it. Offline,
    /// local commits wait in the store and go out, in order, once it connects again.
    ///
    /// Stop it with ``SharingSession/stop()``; releasing it stops it too.
    public func share(through sharing: PostgresSharing) throws -> SharingSession {
        if isReadOnly {
            throw StoreError(.readOnly, path: url?.path ?? ":memory:", "a store opened read-only cannot share: open it with write access")
        }
        try database.write { db in
            try GlobalIDs.createTable(db)
            try SharingState.install(db)
            try SharingState.set(.server, sharing.configuration.description, in: db)
            try SharingState.set(.active, "1", in: db)
        }
        return SharingSession(store: self, sharing: sharing)
    }

    /// The server this store shared through last, whether or not it still shares (to offer
    /// sharing with it again after ``stopSharing()``), or nil when it never shared.
    public func lastSharingServer() throws -> String? {
        try database.read { db in try SharingState.value(.server, in: db) }
    }

    /// The server this store shares through (`postgresql://USER@HOST:PORT/DATABASE`,
    /// without a password), or nil when it does not share.
    public func sharingServer() throws -> String? {
        try database.read { db in
            guard try SharingState.value(.active, in: db) == "1" else { return nil }
            return try SharingState.value(.server, in: db)
        }
    }

    /// Stops sharing: the store no longer names a server, and nothing is pushed or pulled
    /// until ``share(through:)`` is called again. What it took from the server stays, and so
    /// does what it knows about it: sharing again with the same database goes on from where
    /// it stopped, local changes made meanwhile included. Stop a running session first.
    public func stopSharing() throws {
        try database.write { db in
            guard try db.tableExists(SharingState.stateTable) else { return }
            try SharingState.set(.active, nil, in: db)
        }
    }
}
