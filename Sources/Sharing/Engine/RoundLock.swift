import Foundation

/// One sharing round at a time per store file, across every process that shares it (the
/// viewer and an `apply --share` script, two viewers): an exclusive `flock(2)` on a file
/// beside the store (`<store>-sharing-lock`), held for the round.
///
/// Without it, two processes' rounds interleave their reads of the store's sharing state
/// and their writes of what the server answered: a push of counters sent again by one
/// process while the other takes its end adds the delta to the base twice, and a tap is
/// lost. The kernel releases the lock when its holder ends, however it ends (kill -9
/// included), so a round never waits on a dead process. Local saves never take it.
struct RoundLock: Sendable {
    /// The lock file; nil for a store in memory, which one process alone can share.
    let path: String?

    init(store url: URL?) {
        path = url.map { $0.path + "-sharing-lock" }
    }

    /// Waits (on a thread of its own, not the caller's) until this is the only round on the
    /// store, and returns what releases it; nil if the lock file cannot be opened (a
    /// read-only folder), in which case the round goes on unlocked.
    func acquire() async -> Held? {
        guard let path else { return nil }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        // Not held by another round of any process: taken at once, with no thread.
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return Held(descriptor: descriptor) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
                continuation.resume()
            }
        }
        return Held(descriptor: descriptor)
    }

    /// A lock held; ``release()`` (or the process's end) lets the next round go.
    final class Held: @unchecked Sendable {
        private let lock = NSLock()
        private var descriptor: Int32?

        init(descriptor: Int32) { self.descriptor = descriptor }

        /// Releases it; later calls do nothing.
        func release() {
            let descriptor = lock.withLock { () -> Int32? in
                defer { self.descriptor = nil }
                return self.descriptor
            }
            if let descriptor { close(descriptor) }
        }

        deinit { release() }
    }
}
