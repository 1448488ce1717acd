import ArgumentParser
import Datasets
import Dispatch
import Foundation
import Logging
import ObjectStore
import Sharing

/// `--share` and `--unshare`, taken by the commands that open a store to show or change it.
struct SharingOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Share the store through this PostgreSQL database (postgresql://USER@HOST[:PORT]/DATABASE), creating its tables on first use. The store remembers it: later runs share without the option. The password comes from PGPASSWORD or ~/.pgpass, never from the store.",
        valueName: "url"))
    var share: String?

    @Flag(help: "Stop sharing the store (it forgets its server; what it took stays).")
    var unshare = false

    func validate() throws {
        if share != nil && unshare { throw ValidationError("--share and --unshare: give one of them") }
        if let share {
            do { _ = try ServerConfiguration(url: share) } catch { throw ValidationError("--share: \(error)") }
        }
    }

    /// The server to share through: `--share`'s, else the one the store remembers; nil when
    /// the store does not share (or `--unshare` stopped it).
    func configuration(for store: PersistentStore) throws -> ServerConfiguration? {
        if unshare {
            if let server = try store.sharingServer() {
                try store.stopSharing()
                FileHandle.standardError.write(Data("sharing: the store no longer shares through \(server)\n".utf8))
            }
            return nil
        }
        guard let url = try share ?? store.sharingServer() else { return nil }
        return try ServerConfiguration(url: url)
    }

    /// Starts sharing `store` when it should, writing each change of the status to standard
    /// error as one line.
    func start(_ store: PersistentStore, mergePolicy: MergePolicy = .error) throws -> SharingSession? {
        guard let configuration = try configuration(for: store) else { return nil }
        let sharing = PostgresSharing(configuration, mergePolicy: mergePolicy)
        let session = try store.share(through: sharing)
        Task {
            var lastRejected: Int64 = 0
            var lastTransferLine = ContinuousClock.now - .seconds(2)
            for await status in session.statusUpdates() {
                // A long transfer's progress: a line a second.
                if status.transfer != nil {
                    guard ContinuousClock.now - lastTransferLine >= .seconds(1) else { continue }
                    lastTransferLine = .now
                }
                FileHandle.standardError.write(Data("sharing: \(status)\n".utf8))
                // Each change refused for not fitting the model and not dismissed, once a run.
                guard status.rejectedChanges > 0, let rejected = try? session.rejectedChanges(after: lastRejected) else { continue }
                for change in rejected { FileHandle.standardError.write(Data("sharing: rejected: \(change)\n".utf8)) }
                lastRejected = rejected.last?.number ?? lastRejected
            }
        }
        // Joining first, so that a new store shows the server's objects rather than its seed;
        // offline, the command goes on with what the store holds.
        _ = session.synchronizeWaiting(timeout: .seconds(10))
        return session
    }
}

extension SharingSession {
    /// Waits until everything committed locally went to the server, for a command about to
    /// end: as long as a long transfer moves on (a big store's first push), else up to
    /// `timeout`; says on standard error what stays queued when the server cannot be reached.
    func finishPushing(timeout: Duration = .seconds(30)) {
        var moved = status.transfer?.done
        var finished = true
        while let error = synchronizeWaiting(timeout: timeout) {
            guard error is CancellationError, let done = status.transfer?.done, done != moved else {
                finished = false
                break
            }
            moved = done
        }
        if !finished {
            let pending = status.pendingChanges
            FileHandle.standardError.write(Data("sharing: \(pending) change\(pending == 1 ? "" : "s") not sent yet (\(status)); they go out the next time this store shares\n".utf8))
        }
        let stopped = DispatchSemaphore(value: 0)
        Task {
            await self.stop()
            stopped.signal()
        }
        stopped.wait()
    }
}

extension SharingSession {
    /// ``synchronize()`` from a command's thread: blocks up to `timeout`, and returns the
    /// error when it did not finish.
    func synchronizeWaiting(timeout: Duration) -> (any Error)? {
        let done = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        let task = Task {
            do { try await self.synchronize() } catch { outcome.error = error }
            done.signal()
        }
        if done.wait(timeout: .now() + .milliseconds(Int(timeout.components.seconds * 1000))) == .timedOut {
            task.cancel()
            return CancellationError()
        }
        return outcome.error
    }
}

private final class OutcomeBox: @unchecked Sendable {
    var error: (any Error)?
}
