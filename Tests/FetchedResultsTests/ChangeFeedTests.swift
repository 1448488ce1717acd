import FetchedResults
import Foundation
import ObjectStore
import TestSupport
import XCTest

/// The store's change feed: every commit to the file, whoever made it, reaches subscribers
/// and following controllers without a timer (the kernel tells), once each and in order,
/// through WAL checkpoints and file-system event storms, and a subscriber that does not
/// return holds up neither the writers nor the other subscribers.
final class ChangeFeedTests: XCTestCase {
    typealias Team = WorldCup.Team

    /// The `sqlite3` shell's update reaches a following controller with the safety look
    /// set to an hour: the kernel told, no timer fired.
    func testAnotherProcesssCommitArrivesWithoutATimer() throws {
        let (store, controller, _, _, following) = try WorldCup.followed(in: try temporaryFolder(self))
        XCTAssertTrue(store.feed.isWatchedByTheKernel, "inotify watches the store's folder here")
        for wins in 1...5 {
            try sqlite3(store.url!, "UPDATE Team SET wins = \(wins) WHERE teamName = 'Ghana'")
            XCTAssertTrue(waitUntil({ controller.fetchedObjects?.first { $0.teamName == "Ghana" }?.wins == wins }, timeout: 5),
                          "commit \(wins) arrived without a timer")
        }
        withExtendedLifetime(following) {}
    }

    /// A following process's own saves: the kernel tells of their writes too, but the feed
    /// knows them by the files being as the commit left them, and looks once a save (at
    /// its commit), not a sequence of looks a save (about six, 30 ms apart). Another
    /// process's commit in the middle of them still arrives.
    func testThisProcesssOwnSavesMakeOneLookEach() throws {
        let (store, controller, _, _, following) = try WorldCup.followed(in: try temporaryFolder(self))
        XCTAssertTrue(store.feed.isWatchedByTheKernel, "inotify watches the store's files here")
        let context = controller.managedObjectContext
        let teams = try context.fetch(FetchRequest<Team>(entityName: "Team"))
        RunLoop.current.run(until: Date().addingTimeInterval(1.5))
        let before = store.feed.looksMade
        let saves = 30
        for round in 0..<saves {
            teams[round % teams.count].wins = 100 + round
            try context.save()
            RunLoop.current.run(until: Date().addingTimeInterval(0.03))
        }
        RunLoop.current.run(until: Date().addingTimeInterval(1.5))
        let looks = store.feed.looksMade - before
        XCTAssertGreaterThanOrEqual(looks, saves, "each save was looked at")
        XCTAssertLessThanOrEqual(looks, saves + 5, "one look a save, and a late one a second")

        try sqlite3(store.url!, "UPDATE Team SET wins = 77 WHERE teamName = 'Ghana'")
        XCTAssertTrue(waitUntil({ controller.fetchedObjects?.first { $0.teamName == "Ghana" }?.wins == 77 }, timeout: 5),
                      "another process's commit still arrives")
        withExtendedLifetime(following) {}
    }

    /// Three processes commit 10,000 inserts between them (each its own transaction), with
    /// WAL checkpoints (TRUNCATE) by another process and a storm of events from unrelated
    /// files in the same folder: a subscriber gets each insert once, in token order, and a
    /// following controller's batches are valid and end at a fresh fetch.
    func testTenThousandCommitsFromThreeProcessesArriveOnceEachInOrder() throws {
        let folder = try temporaryFolder(self)
        let (store, controller, recorder, before, following) = try WorldCup.followed(in: folder)
        let deliveries = Deliveries()
        let subscription = try store.observeChanges(on: DispatchQueue(label: "subscriber")) { deliveries.append($0) }

        let total = 10_000
        let scripts = (0..<3).map { process -> URL in
            let url = folder.appendingPathComponent("writer\(process).sql")
            let count = total / 3 + (process < total % 3 ? 1 : 0)
            let lines = (0..<count).map { "INSERT INTO Team (teamName, qualifyingZone, wins) VALUES ('P\(process)-\($0)', 'Zone \(process)', 0);" }
            try? (".timeout 10000\n" + lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
            return url
        }
        let writers = try scripts.map { script -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            process.arguments = [store.url!.path]
            process.standardInput = try FileHandle(forReadingFrom: script)
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        // Checkpoints that truncate the WAL, and a storm of unrelated files, meanwhile.
        let storm = Thread {
            var round = 0
            while writers.contains(where: \.isRunning) {
                round += 1
                for i in 0..<200 { FileManager.default.createFile(atPath: folder.appendingPathComponent("noise-\(i)").path, contents: Data([UInt8(round % 256)])) }
                if round % 5 == 0 { _ = try? sqlite3(store.url!, "PRAGMA wal_checkpoint(TRUNCATE)") }
            }
        }
        storm.start()
        XCTAssertTrue(waitUntil({ !writers.contains(where: \.isRunning) }, timeout: 120), "the writers finish")
        for writer in writers { XCTAssertEqual(writer.terminationStatus, 0) }
        let current = try store.currentHistoryToken()
        XCTAssertTrue(waitUntil({ deliveries.lastToken == current }, timeout: 20), "the subscriber reaches the current token \(current): \(deliveries.lastToken)")
        let inserted = deliveries.all.flatMap(\.changes.inserted)
        XCTAssertEqual(inserted.count, total, "every insert once")
        XCTAssertEqual(Set(inserted).count, total, "no insert twice")
        XCTAssertEqual(deliveries.all.map(\.token), deliveries.all.map(\.token).sorted(), "in commit order")
        XCTAssertFalse(deliveries.all.contains { $0.changes.invalidatedAllObjects }, "no gap: the history kept up")

        XCTAssertTrue(waitUntil({ controller.fetchedObjects?.count == WorldCup.teams.count + total }, timeout: 20),
                      "the controller holds every team: \(controller.fetchedObjects?.count ?? 0)")
        try WorldCup.assertBatchesLeadToAFreshFetch(recorder, from: before, controller: controller, store: store, "10,000 commits")
        withExtendedLifetime((following, subscription)) {}
    }

    /// Saves of another context on this store object, commits of a second store object on
    /// the file (another process's route) and the `sqlite3` shell's, made at once from three
    /// threads in a seeded random rhythm, reach a following context by one route: each
    /// insert once, in commit order (the rows' keys grow with it), and the following
    /// controller's batches end at a fresh fetch.
    func testSavesOfThisStoresContextsAndOtherWritersArriveInCommitOrder() throws {
        let seed = SeededGenerator.seed()
        print("ChangeFeedTests seed: \(seed) (SEED=\(seed) replays it)")
        let folder = try temporaryFolder(self)
        let (store, controller, recorder, before, following) = try WorldCup.followed(in: folder)
        let context = controller.managedObjectContext
        var merged: [Set<ObjectID>] = []
        let observation = context.addObserver { event in
            if case .objectsDidChange(let changes) = event, !changes.inserted.isEmpty { merged.append(changes.inserted) }
        }
        let sibling = ObjectContext(store: store, queue: DispatchQueue(label: "sibling"))
        let otherStore = try PersistentStore(url: store.url!, model: store.model)
        let other = ObjectContext(store: otherStore, queue: DispatchQueue(label: "other store"))
        let perWriter = 60
        let writers: [(String, @Sendable (Int) throws -> Void)] = [
            ("sibling", { i in try sibling.performAndWait { _ = try WorldCup.insert("S-\(i)", "Zone S", into: sibling); try sibling.save() } }),
            ("other store", { i in try other.performAndWait { _ = try WorldCup.insert("O-\(i)", "Zone O", into: other); try other.save() } }),
            ("sqlite3", { i in try sqlite3(store.url!, "INSERT INTO Team (teamName, qualifyingZone, wins) VALUES ('Q-\(i)', 'Zone Q', 0)") }),
        ]
        let group = DispatchGroup()
        let failures = Failures()
        for (index, (name, write)) in writers.enumerated() {
            var random = SeededGenerator(seed: seed &+ UInt64(index))
            let pauses = (0..<perWriter).map { _ in UInt32.random(in: 0...3_000, using: &random) }
            DispatchQueue.global().async(group: group) {
                for i in 0..<perWriter {
                    usleep(pauses[i])
                    do { try write(i) } catch { failures.append("\(name) \(i): \(error)") }
                }
            }
        }
        XCTAssertTrue(waitUntil({ group.wait(timeout: .now()) == .success }, timeout: 120), "the writers finish")
        XCTAssertEqual(failures.all, [])
        let total = WorldCup.teams.count + 3 * perWriter
        XCTAssertTrue(waitUntil({ controller.fetchedObjects?.count == total }, timeout: 20),
                      "the controller holds every team: \(controller.fetchedObjects?.count ?? 0) of \(total)")
        RunLoop.current.run(until: Date().addingTimeInterval(0.2))
        let keys = merged.map { Set($0.compactMap(\.primaryKey)) }
        XCTAssertEqual(keys.map(\.count).reduce(0, +), 3 * perWriter, "every insert once")
        XCTAssertEqual(Set(keys.flatMap { $0 }).count, 3 * perWriter, "no insert twice")
        for (earlier, later) in zip(keys, keys.dropFirst()) where earlier.max()! > later.min()! {
            XCTFail("merged out of commit order: \(earlier.sorted()) before \(later.sorted()) (seed \(seed))")
        }
        try WorldCup.assertBatchesLeadToAFreshFetch(recorder, from: before, controller: controller, store: store, "three writers")
        withExtendedLifetime((following, observation, sibling, other)) {}
    }

    /// Another program deletes the store file (with its WAL and shared memory) and makes it
    /// again with other teams, as a restore from a backup does: a following controller ends
    /// at a fresh fetch of the new file by valid batches, a subscriber hears that anything
    /// may have changed, later commits to the new file arrive, and this process's saves go to it.
    func testAStoreFileDeletedAndMadeAgainByAnotherProgramIsFollowed() throws {
        let folder = try temporaryFolder(self)
        let (store, controller, recorder, before, following) = try WorldCup.followed(in: folder)
        let deliveries = Deliveries()
        let subscription = try store.observeChanges(on: DispatchQueue(label: "subscriber")) { deliveries.append($0) }
        let url = store.url!
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        // An empty file first (a copy just begun): never given a schema by this process, and
        // the list stays as it was.
        FileManager.default.createFile(atPath: url.path, contents: nil)
        RunLoop.current.run(until: Date().addingTimeInterval(0.5))
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int), 0, "the empty file is left as it is")
        XCTAssertEqual(controller.fetchedObjects?.count, WorldCup.teams.count)
        try FileManager.default.removeItem(at: url)
        do {
            // Another program's store object: its own connections to the new file.
            let other = try PersistentStore(url: url, model: store.model)
            let context = ObjectContext(store: other, queue: DispatchQueue(label: "other program"))
            try context.performAndWait {
                try WorldCup.insert("Fiji", "Oceania", wins: 1, into: context)
                try WorldCup.insert("Peru", "South America", wins: 2, into: context)
                try context.save()
            }
        }
        func names() -> [String] { (controller.fetchedObjects ?? []).map(\.teamName).sorted() }
        XCTAssertTrue(waitUntil({ names() == ["Fiji", "Peru"] }, timeout: 10), "the list shows the new file: \(names())")
        XCTAssertTrue(waitUntil({ deliveries.all.contains { $0.changes.invalidatedAllObjects } }, timeout: 10),
                      "the subscriber hears that anything may have changed")

        try sqlite3(url, "UPDATE Team SET wins = 7 WHERE teamName = 'Fiji'")
        XCTAssertTrue(waitUntil({ controller.fetchedObjects?.first { $0.teamName == "Fiji" }?.wins == 7 }, timeout: 5),
                      "a later commit to the new file arrives")
        let peru = try XCTUnwrap(controller.fetchedObjects?.first { $0.teamName == "Peru" })
        peru.wins = 9
        try controller.managedObjectContext.save()
        XCTAssertEqual(try sqlite3(url, "SELECT wins FROM Team WHERE teamName = 'Peru'").trimmingCharacters(in: .whitespacesAndNewlines), "9",
                       "this process's save went to the new file")
        try WorldCup.assertBatchesLeadToAFreshFetch(recorder, from: before, controller: controller, store: store, "a replaced file")
        withExtendedLifetime((following, subscription)) {}
    }

    /// A subscriber whose handler does not return (until the test lets it) holds up no
    /// save, and 100 other subscribers go on being told; let go, it gets everything
    /// committed meanwhile, in one call.
    func testASubscriberThatDoesNotReturnHoldsUpNoWriterAndNoOtherSubscriber() throws {
        let (store, context) = try WorldCup.open(in: try temporaryFolder(self))
        let gate = DispatchSemaphore(value: 0)
        let stuck = Deliveries()
        let blocked = try store.observeChanges(on: DispatchQueue(label: "stuck")) { changes in
            stuck.append(changes)
            if stuck.all.count == 1 { gate.wait() }
        }
        let others = (0..<100).map { _ in Deliveries() }
        let subscriptions = try others.enumerated().map { index, deliveries in
            try store.observeChanges(on: DispatchQueue(label: "subscriber \(index)")) { deliveries.append($0) }
        }
        let teams = try context.fetch(FetchRequest<Team>(entityName: "Team"))
        // A first save: the stuck one is told, and stays in that call.
        teams[0].wins = 1000
        try context.save()
        XCTAssertTrue(waitUntil({ stuck.all.count == 1 }, timeout: 20))
        let edited = teams.dropFirst().prefix(20)
        for (round, team) in edited.enumerated() {
            team.wins = 2000 + round
            try context.save()
        }
        let current = try store.currentHistoryToken()
        XCTAssertTrue(waitUntil({ others.allSatisfy { $0.lastToken == current } }, timeout: 20), "every other subscriber is told of every save")
        XCTAssertEqual(stuck.all.count, 1, "the stuck one is still in its first call, and the saves were made")
        gate.signal()
        XCTAssertTrue(waitUntil({ stuck.lastToken == current }, timeout: 20))
        XCTAssertEqual(stuck.all.count, 2, "let go, it gets the rest in one call")
        XCTAssertEqual(Set(stuck.all[1].changes.updated.keys), Set(edited.map(\.objectID)))
        withExtendedLifetime((blocked, subscriptions)) {}
    }

    /// `committedChanges()` as an asynchronous sequence: another process's commit arrives.
    func testCommittedChangesAsAnAsyncSequence() throws {
        let (store, _) = try WorldCup.open(in: try temporaryFolder(self))
        let changes = try store.committedChanges()
        let deliveries = Deliveries()
        let reader = Task {
            for await change in changes {
                deliveries.append(change)
                break
            }
        }
        try sqlite3(store.url!, "UPDATE Team SET wins = 3 WHERE teamName = 'Japan'")
        XCTAssertTrue(waitUntil({ !deliveries.all.isEmpty }, timeout: 5))
        XCTAssertEqual(deliveries.all.first?.changes.updated.count, 1)
        reader.cancel()
    }
}

/// What a subscriber was given, from any queue.
private final class Deliveries: @unchecked Sendable {
    private let lock = NSLock()
    private var deliveries: [StoreChanges] = []

    func append(_ changes: StoreChanges) { lock.withLock { deliveries.append(changes) } }
    var all: [StoreChanges] { lock.withLock { deliveries } }
    var lastToken: Int64 { lock.withLock { deliveries.last?.token ?? -1 } }
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []

    func append(_ failure: String) { lock.withLock { failures.append(failure) } }
    var all: [String] { lock.withLock { failures } }
}
