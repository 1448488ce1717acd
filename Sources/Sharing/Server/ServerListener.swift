import Logging
import PostgresNIO

/// One dedicated connection that listens for the change log's wake-ups, and reconnects when
/// it drops.
///
/// ``events()`` tells a reader when to pull: ``Event/connected`` each time the connection
/// is (re)established, after `LISTEN` took effect, so that a pull then catches up on
/// everything committed while nobody listened, and no commit after it goes unnoticed;
/// ``Event/woken`` for each notification; ``Event/timer`` every `safetyInterval`, in case
/// a notification was lost in between; ``Event/disconnected(_:)`` when the connection
/// could not be made or dropped, before the next try, `reconnectDelay` later.
///
/// Notifications carry no data: every event means "pull", and several at once mean no more
/// than one.
///
/// ## Topics
/// - ``init(configuration:reconnectDelay:safetyInterval:logger:)``
/// - ``events()``
/// - ``Event``
package struct ServerListener: Sendable {
    /// Why a reader should pull now.
    package enum Event: Sendable, Hashable {
        /// The connection listens (again): catch up.
        case connected
        /// A transaction changed the change log.
        case woken
        /// The safety-net interval passed.
        case timer
        /// The connection could not be made or was lost; the description says why.
        case disconnected(String)
    }

    package let configuration: ServerConfiguration
    package let reconnectDelay: Duration
    package let safetyInterval: Duration
    let logger: Logger
    /// The event loop of the connection and the preferred executor of the listener's tasks
    /// (a sharing engine's, see ``EngineExecutor``); nil: postgres-nio's and Swift's defaults.
    let eventLoop: (any EventLoop)?
    let executor: (any TaskExecutor)?

    package init(configuration: ServerConfiguration, reconnectDelay: Duration = .seconds(1), safetyInterval: Duration = .seconds(30), logger: Logger) {
        self.init(configuration: configuration, reconnectDelay: reconnectDelay, safetyInterval: safetyInterval, logger: logger, eventLoop: nil, executor: nil)
    }

    init(configuration: ServerConfiguration, reconnectDelay: Duration, safetyInterval: Duration, logger: Logger, eventLoop: (any EventLoop)?, executor: (any TaskExecutor)?) {
        self.configuration = configuration
        self.reconnectDelay = reconnectDelay
        self.safetyInterval = safetyInterval
        self.logger = logger
        self.eventLoop = eventLoop
        self.executor = executor
    }

    /// The events of a new connection, until the sequence is dropped or its task cancelled.
    package func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(64))
        let task = Task(executorPreference: executor) {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.listen(continuation) }
                group.addTask {
                    while (try? await Task.sleep(for: self.safetyInterval)) != nil { continuation.yield(.timer) }
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func listen(_ continuation: AsyncStream<Event>.Continuation) async {
        var attempt = 0
        var failures = 0
        while !Task.isCancelled {
            attempt += 1
            var refused = false
            do {
                let connection = try await PostgresConnection.connect(on: eventLoop ?? PostgresConnection.defaultEventLoopGroup.any(),
                                                                      configuration: try configuration.connection, id: attempt, logger: logger)
                do {
                    try await connection.listen(on: ServerSchema.notificationChannel) { notifications in
                        failures = 0
                        continuation.yield(.connected)
                        for try await _ in notifications { continuation.yield(.woken) }
                    }
                    Task(executorPreference: executor) { try? await connection.close() }
                    // The notifications ended without an error: the connection was closed.
                    if !Task.isCancelled { continuation.yield(.disconnected("the connection to \(configuration) was closed")) }
                } catch {
                    Task(executorPreference: executor) { try? await connection.close() }
                    throw error
                }
            } catch {
                if Task.isCancelled { return }
                let refusal = configuration.refusal(error)
                refused = refusal != nil
                continuation.yield(.disconnected(refusal.map { "\($0)" } ?? "\(configuration): \(String(reflecting: error))"))
            }
            // Longer after each failure in a row, as the engine's rounds: a server that is
            // down, or that refuses this desktop, is not asked every second.
            failures += 1
            let longest = refused ? SharingEngine.refusalRetryDelay : SharingEngine.longestRetryDelay
            try? await Task.sleep(for: min(reconnectDelay * (1 << min(failures - 1, 10)), max(reconnectDelay, longest)))
        }
    }
}
