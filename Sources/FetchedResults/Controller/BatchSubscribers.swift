import Synchronization

/// The continuations of a controller's ``FetchedResultsController/changeBatches`` streams:
/// added on any thread, removed when their task ends, fed on the context's queue.
final class BatchSubscribers: Sendable {
    private let continuations = Mutex<(next: Int, all: [Int: AsyncStream<ChangeBatch>.Continuation])>((0, [:]))

    var hasSubscribers: Bool { continuations.withLock { !$0.all.isEmpty } }

    func subscribe() -> AsyncStream<ChangeBatch> {
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeBatch.self)
        let key = continuations.withLock { state in
            state.next += 1
            state.all[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            self?.continuations.withLock { _ = $0.all.removeValue(forKey: key) }
        }
        return stream
    }

    func yield(_ batch: ChangeBatch) {
        for continuation in continuations.withLock({ Array($0.all.values) }) { continuation.yield(batch) }
    }
}
