import PostgresNIO
import Synchronization

/// The thread a ``SharingEngine`` runs on: an event loop of its own, which is at once
/// - the engine actor's executor,
/// - the preferred executor of every task the engine runs (``TaskExecutor``), so that the
///   nonisolated async code it calls (postgres-nio's queries and row sequences, the server
///   log's reads) runs there too, not on the cooperative pool, and
/// - the event loop of its connections to the server (the round's and the listener's).
///
/// A change from another desktop then stays on one thread from the listener's notification
/// to the round's query and its rows. On the cooperative pool, with the connections on
/// their own event loops, each change crossed between those threads about nine times (a
/// hop wakes a thread: a system call, a context switch, the caches of another core): with
/// twenty desktops, half of a desktop's context switches.
///
/// What blocks the engine blocks this loop: its short reads of the store
/// (``SharingEngine/readNow(_:)``), its pulled pages' writes (``SharingEngine/writeNow(_:)``)
/// and the decoding of pulled pages run here. So each engine has a loop of its own (a
/// thread): two desktops' engines in one process (a viewer with two stores, the tests)
/// would otherwise wait for each other. A task does not retain its preferred executor,
/// so an executor is never released: an engine that ends gives its executor back, and the
/// next engine takes it (a stray task of the old one, closing a connection, may still run
/// there).
final class EngineExecutor: TaskExecutor, @unchecked Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let eventLoop: any EventLoop

    private init() {
        eventLoop = group.next()
    }

    /// The executors no engine uses now.
    private static let free = Mutex<[EngineExecutor]>([])

    /// A free executor, or a new one (a new thread).
    static func take() -> EngineExecutor {
        free.withLock { $0.popLast() } ?? EngineExecutor()
    }

    /// Makes this executor free for the next engine (at the end of the engine's life).
    func giveBack() {
        Self.free.withLock { $0.append(self) }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// The loop as a serial executor, for the engine actor.
    var serialExecutor: UnownedSerialExecutor { eventLoop.executor.asUnownedSerialExecutor() }
}
