import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// A new request fetched off the context's queue: the list takes its results as one valid
/// batch, a superseded request's results never show, and a new sort on a long list reloads.
final class BackgroundFetchTests: XCTestCase {
    private var context: ObjectContext!
    private var controller: FetchedResultsController<ManagedObject>!
    private var recorder: BatchRecorder<ManagedObject>!

    private let byZoneThenScore = [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "name")]

    override func setUpWithError() throws {
        context = try League.context(self)
        for i in 0..<200 {
            try League.insertPlayer(context, name: String(format: "P%03d", i), zone: ["A", "B", "C"][i % 3], score: (i * 7) % 50)
        }
        try context.save()
        controller = FetchedResultsController(
            fetchRequest: FetchRequest(entityName: "Player", sortDescriptors: byZoneThenScore),
            managedObjectContext: context, sectionNameKeyPath: "zone")
        recorder = BatchRecorder()
        controller.delegate = recorder
        try controller.performFetch()
    }

    private func request(_ format: String?, sorts: [FetchSortDescriptor]? = nil) throws -> FetchRequest<ManagedObject> {
        FetchRequest(entityName: "Player", predicate: try format.map { try FetchPredicate(format: $0) }, sortDescriptors: sorts ?? byZoneThenScore)
    }

    private func fresh(_ request: FetchRequest<ManagedObject>) throws -> [SectionSnapshot] {
        let other = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "zone")
        try other.performFetch()
        return other.snapshot
    }

    /// Sets `request` in the background and waits for its completion.
    private func set(_ request: FetchRequest<ManagedObject>) throws {
        let done = expectation(description: "shown")
        nonisolated(unsafe) var failure: Error?
        controller.setFetchRequest(request) { error in
            failure = error
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        if let failure { throw failure }
    }

    func testASearchIsOneValidBatchOfDeletesAndInserts() throws {
        for format in ["score > 30", "score > 10", "name CONTAINS '1'", "zone == 'B' OR score < 5", nil] {
            let before = controller.snapshot
            recorder.batches.removeAll()
            let request = try request(format)
            try set(request)
            XCTAssertEqual(recorder.batches.count, 1, "\(format ?? "all")")
            XCTAssertEqual(try recorder.batches[0].applied(to: before), controller.snapshot, "\(format ?? "all")")
            XCTAssertEqual(controller.snapshot, try fresh(request), "\(format ?? "all")")
            XCTAssertFalse(recorder.batches[0].objectChanges.contains { $0.type == .move }, "a search moves nothing")
        }
    }

    /// A long list's new request is fetched in two halves at once (split by zone at the
    /// list's middle section): random searches and orders, zones ascending and descending,
    /// players without a zone or with an empty one; each shown as one valid batch, the same
    /// list a fresh fetch makes.
    func testALongListsNewRequestFetchedInTwoHalvesShowsWhatAFreshFetchDoes() throws {
        let seed = SeededGenerator.seed()
        print("seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        for i in 0..<30 {
            try League.insertPlayer(context, name: "Q\(i)", zone: i % 2 == 0 ? nil : "", score: i)
            try League.insertPlayer(context, name: "R\(i)", zone: ["A", "AB", "Z", "b"][i % 4], score: i)
        }
        try context.save()
        controller.policy.splitFetchThreshold = 1
        let formats: [String?] = [nil, "score > 30", "score < 10", "name CONTAINS[cd] '1'", "zone == 'B' OR score < 5", "zone != 'A'", "score > 100"]
        let sorts = [byZoneThenScore, [FetchSortDescriptor(key: "zone", ascending: false), FetchSortDescriptor(key: "name")],
                     [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "name", ascending: false)]]
        for step in 0..<30 {
            let format = formats.randomElement(using: &rng)!, sort = sorts.randomElement(using: &rng)!
            let what = "seed \(seed), step \(step): \(format ?? "all"), \(sort.map { "\($0.key)\($0.ascending ? "" : " desc")" })"
            let before = controller.snapshot
            recorder.batches.removeAll()
            let request = try request(format, sorts: sort)
            try set(request)
            XCTAssertEqual(controller.snapshot, try fresh(request), what)
            XCTAssertEqual(try recorder.batches.reduce(before) { try $1.applied(to: $0) }, controller.snapshot, what)
        }
        XCTAssertGreaterThan(controller.counts.splitFetches, 10, "seed \(seed): requests fetched in two halves")
    }

    func testASupersededRequestNeverShows() throws {
        let first = try request("score > 40"), second = try request("score < 3")
        let done = expectation(description: "the second is shown")
        nonisolated(unsafe) var completed: [String] = []
        controller.setFetchRequest(first) { _ in completed.append("first") }
        controller.setFetchRequest(second) { _ in
            completed.append("second")
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        // Give a late first result every chance to arrive.
        let settle = expectation(description: "settled")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { settle.fulfill() }
        wait(for: [settle], timeout: 5)
        XCTAssertEqual(completed, ["second"], "the superseded request's completion is never called")
        XCTAssertEqual(controller.snapshot, try fresh(second))
        XCTAssertEqual(controller.fetchRequest.predicate, second.predicate)
        XCTAssertLessThanOrEqual(recorder.batches.count, 1, "only the last request's results were shown")
    }

    /// A search still reading a long list when the next key's request comes is interrupted
    /// (it would keep the cores from the next one): whole, or in two halves. Its
    /// completion is never called and the list shows the newer request's results.
    func testASupersededRequestStillBeingFetchedIsInterrupted() throws {
        // 400,000 more players, written by SQL: searching them through the CONTAINS[cd]
        // function takes over a second in a debug build, in two halves too. (With 100,000,
        // a fast machine read them all in about the 0.2 s the test waits below, and the
        // slow fetch was sometimes over before the next request came.)
        try context.store.database.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 400000)
                INSERT INTO "Player" (name, zone, score, active) SELECT 'X' || i, char(65 + i % 3), i % 50, 1 FROM n
                """)
        }
        for (n, threshold) in [Int.max, 1].enumerated() {
            controller = FetchedResultsController(fetchRequest: try request(nil), managedObjectContext: context, sectionNameKeyPath: "zone")
            controller.delegate = recorder
            try controller.performFetch()
            controller.policy.splitFetchThreshold = threshold
            let slow = try request("name CONTAINS[cd] 'nobody'"), next = try request("score < 3")
            nonisolated(unsafe) var completed: [String] = []
            controller.setFetchRequest(slow) { _ in completed.append("slow") }
            // Let the slow fetch start reading.
            Thread.sleep(forTimeInterval: 0.2)
            let done = expectation(description: "the next request is shown")
            controller.setFetchRequest(next) { _ in
                completed.append("next")
                done.fulfill()
            }
            wait(for: [done], timeout: 30)
            // The interrupted fetch counts itself as it ends, on its own thread.
            let deadline = Date().addingTimeInterval(10)
            while controller.interruptedFetches == 0 && Date() < deadline { RunLoop.current.run(until: Date().addingTimeInterval(0.01)) }
            XCTAssertEqual(controller.interruptedFetches, 1, "the slow fetch was interrupted (split: \(n == 1))")
            // Two halves need two cores (`splitBoundary`).
            let splits = ProcessInfo.processInfo.activeProcessorCount >= 2 ? 2 * n : 0
            XCTAssertEqual(controller.counts.splitFetches, splits, "both requests in two halves, or neither")
            XCTAssertEqual(completed, ["next"])
            XCTAssertEqual(controller.snapshot, try fresh(next))
        }
    }

    func testANewSortReloadsALongListAndMovesAShortOne() throws {
        let byName = try request(nil, sorts: [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "name")])
        var before = controller.snapshot
        controller.changeReporting = .batches   // a list that takes whole batches, as GtkBinding's
        controller.reloadThreshold = 100
        try set(byName)
        XCTAssertEqual(recorder.batches.last?.reloadedSections, controller.snapshot, "200 rows over a threshold of 100: a reload")
        XCTAssertEqual(try recorder.batches.last!.applied(to: before), controller.snapshot)
        before = controller.snapshot
        controller.reloadThreshold = 1_000
        try set(try request(nil))
        XCTAssertNil(recorder.batches.last?.reloadedSections, "under the threshold: a difference")
        XCTAssertTrue(recorder.batches.last!.objectChanges.contains { $0.type == .move })
        XCTAssertEqual(try recorder.batches.last!.applied(to: before), controller.snapshot)
        XCTAssertEqual(controller.snapshot, try fresh(try request(nil)))
        // A delegate of Core Data's per-change calls never gets a reload: it could not follow one.
        controller.changeReporting = .changes
        controller.reloadThreshold = 100
        before = controller.snapshot
        try set(byName)
        XCTAssertNil(recorder.batches.last?.reloadedSections)
        XCTAssertEqual(try recorder.batches.last!.applied(to: before), controller.snapshot)
    }

    func testUnsavedChangesAreFetchedAtOnceWithTheRequest() throws {
        try League.insertPlayer(context, name: "Unsaved", zone: "A", score: 49)
        let request = try request("score > 45")
        try set(request)
        XCTAssertTrue(controller.snapshot.flatMap(\.objectIDs).contains { $0.isTemporaryID }, "the unsaved player is in the results")
    }
}
