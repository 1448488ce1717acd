import Foundation
import ObjectStore
import Synchronization

/// What a program costs while nothing happens: `fetched-results view` left alone on a
/// World Cup store, shared through PostgreSQL or not, its CPU time and wake-ups (context
/// switches of all its threads, from /proc) over `seconds` once it has settled, as an idle
/// `watch` is measured by ``FeedBenchmark``.
struct IdleWindowBenchmark {
    let store: URL
    /// `postgresql://…` to share the store through, or nil.
    let share: String?
    let seconds: Int

    func run() throws -> ProcessUsage.Idle {
        let window = Process()
        window.executableURL = FeedBenchmark.executable
        window.arguments = ["view", "--store", store.path] + (share.map { ["--share", $0] } ?? [])
        window.standardOutput = FileHandle.nullDevice
        window.standardError = FileHandle.nullDevice
        try window.run()
        defer {
            window.terminate()
            window.waitUntilExit()
        }
        // Settled: opened, drawn, and (shared) through its first rounds with the server.
        Thread.sleep(forTimeInterval: share == nil ? 3 : 8)
        guard window.isRunning else { throw OptionsError("fetched-results view ended at once (status \(window.terminationStatus))") }
        return try ProcessUsage.idle(pid: window.processIdentifier, seconds: Double(seconds))
    }
}

/// How long a save takes with subscribers on the store's change feed: a tap saved on a
/// context, 200 times with no subscriber, then with 100 subscribers on queues of their own,
/// one of which never returns from its first call. Subscribers are told after the commit,
/// on their own queues, so the save should take no longer.
struct SubscribedSaveBenchmark {
    let store: URL
    let saves = 200

    func run() throws -> (alone: [Double], subscribed: [Double]) {
        let persistent = try PersistentStore(url: store, model: WorldCupStore.model)
        let context = ObjectContext(store: persistent, queue: DispatchQueue(label: "saves"))
        let alone = try timeSaves(context)
        let gate = DispatchSemaphore(value: 0)
        let calls = Atomic<Int>(0)
        var subscriptions = [try persistent.observeChanges(on: DispatchQueue(label: "stuck")) { _ in
            if calls.add(1, ordering: .relaxed).newValue == 1 { gate.wait() }
        }]
        for index in 0..<99 {
            subscriptions.append(try persistent.observeChanges(on: DispatchQueue(label: "subscriber \(index)")) { _ in })
        }
        let subscribed = try timeSaves(context)
        gate.signal()
        for subscription in subscriptions { subscription.cancel() }
        return (alone, subscribed)
    }

    private func timeSaves(_ context: ObjectContext) throws -> [Double] {
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Team")
            request.fetchLimit = saves
            let teams = try context.fetch(request)
            return try teams.map { team in
                guard case .integer(let wins) = team.attributeValue(forKey: "wins") else { return 0 }
                let started = Measure.now()
                try team.setValue(wins + 1, forKey: "wins")
                try context.save()
                return Measure.now() - started
            }
        }
    }
}
