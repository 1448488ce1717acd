import Foundation
import ObjectStore
import Sharing

/// What a dataset's store does about sharing as it opens: share through a server (`--share`,
/// the Share dialog) or stop sharing (`--unshare`). Without a request it shares when it
/// remembers a server.
enum ShareRequest: Equatable {
    case share(url: String)
    case unshare
}

/// A dataset's store sharing through PostgreSQL, as the window shows it: the running
/// ``SharingSession``, and its status and new conflicts handed over on the main loop.
///
/// Pulled changes reach the list the way another process's commits do: the session writes
/// them to the store, and the window's context, following the store, merges them.
final class DatasetSharing {
    let session: SharingSession
    let store: PersistentStore
    /// The status shown now.
    private(set) var status: SharingStatus
    /// Called with each new status.
    var didChangeStatus: ((SharingStatus) -> Void)?
    /// Called with the conflicts recorded since the last call, oldest first; the first call
    /// also has those left from earlier sessions.
    var didFindConflicts: (([SharingConflict]) -> Void)?
    /// The newest conflict handed to ``didFindConflicts``.
    private var lastConflict: Int64 = 0
    /// Called with the changes refused for not fitting the model since the last call
    /// (the first call: those left from earlier sessions too), oldest first.
    var didRejectChanges: (([RejectedChange]) -> Void)?
    /// The newest rejected change handed to ``didRejectChanges``.
    private var lastRejected: Int64 = 0
    private var updates: Task<Void, Never>?
    private var contextObservation: ObservationToken?

    /// Starts sharing `dataset`'s store as `request` says, else when it remembers a server;
    /// nil when it does not share. Throws when the server's address is not one, or the store
    /// cannot share (opened read-only).
    static func start(for dataset: DatasetSession, request: ShareRequest?) throws -> DatasetSharing? {
        let store = dataset.context.store
        if request == .unshare {
            try store.stopSharing()
            return nil
        }
        let url: String?
        if case .share(let requested) = request { url = requested } else { url = try store.sharingServer() }
        guard let url else { return nil }
        let configuration = try ServerConfiguration(url: url)
        return try DatasetSharing(store: store, configuration: configuration, context: dataset.context)
    }

    private init(store: PersistentStore, configuration: ServerConfiguration, context: ObjectContext) throws {
        let sharing = PostgresSharing(configuration, mergePolicy: .error)
        self.store = store
        session = try store.share(through: sharing)
        status = session.status
        let statuses = session.statusUpdates()
        // On the main actor, which the GLib main loop runs (MainQueueSource).
        updates = Task { [weak self] in
            for await status in statuses {
                guard let self else { return }
                self.status = status
                self.didChangeStatus?(status)
                self.lookForConflicts()
            }
        }
        // Conflicts are recorded in the transaction that writes what they kept: the context
        // hears of it when it merges that commit.
        contextObservation = context.addObserver { [weak self] _ in self?.lookForConflicts() }
    }

    /// Hands the conflicts and rejected changes recorded since the last look to
    /// ``didFindConflicts`` and ``didRejectChanges``.
    func lookForConflicts() {
        if status.rejectedChanges > 0, let rejected = try? session.rejectedChanges(after: lastRejected), let last = rejected.last?.number {
            lastRejected = last
            didRejectChanges?(rejected)
        }
        guard let found = try? session.conflicts().filter({ ($0.number ?? 0) > lastConflict }), !found.isEmpty else { return }
        lastConflict = found.compactMap(\.number).max() ?? lastConflict
        didFindConflicts?(found)
    }

    /// Forgets the rejected changes up to and including `number` in the store.
    func dismissRejectedChanges(through number: Int64) {
        try? session.dismissRejectedChanges(through: number)
    }

    /// Forgets the conflicts up to and including `number` in the store.
    func dismissConflicts(through number: Int64) {
        try? session.dismissConflicts(through: number)
    }

    /// Stops the session; with `forget`, the store then stops sharing (forgets its server).
    /// `done` is called once it has, with the error that kept the store from forgetting.
    func stop(forget: Bool = false, done: @escaping ((any Error)?) -> Void = { _ in }) {
        contextObservation = nil
        didFindConflicts = nil
        didRejectChanges = nil
        let session = session, store = store
        Task {
            await session.stop()
            do {
                if forget { try store.stopSharing() }
                done(nil)
            } catch {
                done(error)
            }
        }
    }
}
