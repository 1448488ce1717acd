import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// `performFetch(completion:)`: the controller starts with no sections while its results are
/// fetched off the context's queue, takes them as one valid batch, places the changes made
/// meanwhile on them, and writes its section cache once they show.
final class BackgroundLoadingTests: XCTestCase {
    private var context: ObjectContext!
    private var savedCacheDirectory: URL?

    override func setUpWithError() throws {
        savedCacheDirectory = SectionCache.directory
        SectionCache.directory = try temporaryFolder(self).appendingPathComponent("cache")
        context = try League.context(self)
        _ = try League.insertClubs(3, into: context)
        for i in 0..<200 {
            try League.insertPlayer(context, name: String(format: "P%03d", i), zone: League.zones[i % League.zones.count], score: (i * 7) % 50)
        }
        try context.save()
    }

    override func tearDown() {
        if let savedCacheDirectory { SectionCache.directory = savedCacheDirectory }
        super.tearDown()
    }

    private func controller(cacheName: String? = nil, recorder: BatchRecorder<ManagedObject>) -> FetchedResultsController<ManagedObject> {
        let controller = FetchedResultsController(fetchRequest: League.playersByZone(), managedObjectContext: context,
                                                  sectionNameKeyPath: "zone", cacheName: cacheName)
        controller.delegate = recorder
        return controller
    }

    /// Waits until `completion` was called, once; fails if it is called again meanwhile.
    private func waitForCompletion(_ calls: @escaping () -> Int, file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(10)
        while calls() == 0 && Date() < deadline { RunLoop.current.run(until: Date().addingTimeInterval(0.01)) }
        RunLoop.current.run(until: Date().addingTimeInterval(0.05))
        XCTAssertEqual(calls(), 1, "the completion is called once", file: file, line: line)
    }

    func testTheResultsArriveAsOneBatchAfterAnEmptyStart() throws {
        for reloadThreshold in [20_000, 50] {
            let recorder = BatchRecorder<ManagedObject>()
            let controller = controller(recorder: recorder)
            controller.changeReporting = .batches   // as a list binding takes them
            controller.reloadThreshold = reloadThreshold
            nonisolated(unsafe) var calls = 0
            controller.performFetch { error in
                XCTAssertNil(error)
                calls += 1
            }
            XCTAssertTrue(controller.isLoading)
            XCTAssertEqual(controller.sections?.count, 0, "no sections until the results are in")
            XCTAssertEqual(calls, 0, "the completion waits for the results")
            waitForCompletion { calls }
            XCTAssertFalse(controller.isLoading)
            XCTAssertEqual(recorder.batches.count, 1)
            XCTAssertEqual(try recorder.batches.first?.applied(to: []), controller.snapshot)
            XCTAssertEqual(recorder.batches.first?.reloadedSections != nil, reloadThreshold < 200,
                           "a list longer than the reload threshold arrives as a reload")
            XCTAssertEqual(controller.snapshot, try freshSnapshot { League.byZone(context) })
        }
    }

    /// Random edits, saved or only processed, and another context's saves merged, made right
    /// after the background fetch starts (before or after its read of the store, as the
    /// threads run): none is lost, and the batches take an empty list to the fresh result.
    func testChangesMadeWhileLoadingArePlacedOnTheResults() throws {
        let seed = SeededGenerator.seed()
        print("seed \(seed)")
        let players = Array(try context.fetch(FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "name")])))
        let clubs = Array(try context.fetch(League.clubsByRank()))
        let league = RandomLeagueEdits(context: context, rng: SeededGenerator(seed: seed),
                                       otherContext: .init(chance: .oneIn(4), players: 3, bulkPlayers: 60, merge: .didSave),
                                       players: players, clubs: clubs)
        league.edits = [.insertPlayer, .deletePlayer(whileMoreThan: 50), .zone, .score, .score, .name, .club]
        league.bulk = .oneIn(6)
        for round in 0..<30 {
            if context.hasChanges { try context.save() }
            let recorder = BatchRecorder<ManagedObject>()
            let controller = controller(recorder: recorder)
            nonisolated(unsafe) var calls = 0
            controller.performFetch { _ in calls += 1 }
            XCTAssertTrue(controller.isLoading, "seed \(seed) round \(round)")
            try league.step(round)
            waitForCompletion { calls }
            let message = "seed \(seed) round \(round) after \(league.summary)"
            XCTAssertEqual(try recorder.batches.reduce([]) { try $1.applied(to: $0) }, controller.snapshot, message)
            XCTAssertEqual(controller.snapshot, try freshSnapshot { League.byZone(context) }, message)
        }
    }

    func testANewRequestWhileLoadingShowsAndEndsTheLoading() throws {
        let recorder = BatchRecorder<ManagedObject>()
        let controller = controller(recorder: recorder)
        nonisolated(unsafe) var loaded = 0, searched = 0
        controller.performFetch { _ in loaded += 1 }
        let search = League.playersByZone(try FetchPredicate(format: "score > 30"))
        controller.setFetchRequest(search) { _ in searched += 1 }
        waitForCompletion { searched }
        XCTAssertEqual(loaded, 1, "the loading ends with the newer request's results")
        XCTAssertFalse(controller.isLoading)
        XCTAssertEqual(controller.snapshot, try freshSnapshot {
            FetchedResultsController(fetchRequest: search, managedObjectContext: context, sectionNameKeyPath: "zone")
        })
        XCTAssertEqual(try recorder.batches.reduce([]) { try $1.applied(to: $0) }, controller.snapshot)
    }

    func testTheCacheIsWrittenOnceShownAndReadAtOnceNextTime() throws {
        let cacheFile = SectionCache.directory.appendingPathComponent("players.frcache")
        let first = controller(cacheName: "players", recorder: BatchRecorder())
        nonisolated(unsafe) var calls = 0
        first.performFetch { _ in calls += 1 }
        XCTAssertTrue(first.isLoading, "no cache yet")
        XCTAssertFalse(FileManager.default.fileExists(atPath: cacheFile.path))
        waitForCompletion { calls }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: cacheFile.path) && Date() < deadline { usleep(10_000) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: cacheFile.path), "written once shown")

        let second = controller(cacheName: "players", recorder: BatchRecorder())
        calls = 0
        second.performFetch { _ in calls += 1 }
        XCTAssertFalse(second.isLoading, "read from the cache at once")
        XCTAssertEqual(second.snapshot, first.snapshot)
        XCTAssertEqual(calls, 0, "the completion never runs before performFetch returns")
        waitForCompletion { calls }

        // A save makes the cache stale: fetched in the background again.
        try first.object(at: IndexPath(item: 0, section: 0)).setValue(99, forKey: "score")
        try context.save()
        let third = controller(cacheName: "players", recorder: BatchRecorder())
        calls = 0
        third.performFetch { _ in calls += 1 }
        XCTAssertTrue(third.isLoading, "a stale cache is not read")
        waitForCompletion { calls }
        XCTAssertEqual(third.snapshot, try freshSnapshot { League.byZone(context) })
    }
}
