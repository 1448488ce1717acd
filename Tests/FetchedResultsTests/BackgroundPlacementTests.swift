import FetchedResults
import Foundation
import ObjectStore
import TestSupport
import XCTest

/// Many objects saved elsewhere (an import's chunk) on a long list are placed off the
/// context's queue: the list stays the one the delegate knows until their batch, changes
/// that come meanwhile follow in batches of their own, and every batch is valid.
final class BackgroundPlacementTests: XCTestCase {
    private let zones = ["Africa", "Asia", "Europe", "Oceania", nil]

    /// The saves of `other`, to merge by hand (so a test decides when they arrive).
    private final class SaveLog {
        var saves: [ObjectChanges] = []
        var token: ObservationToken?
    }

    private func log(_ other: ObjectContext) -> SaveLog {
        let log = SaveLog()
        log.token = other.addObserver { [unowned log] event in
            if case .didSave(let changes) = event { log.saves.append(changes) }
        }
        return log
    }

    private func merge(_ log: SaveLog, into context: ObjectContext) {
        for changes in log.saves { context.mergeChanges(fromContextDidSave: changes) }
        log.saves = []
    }

    /// A store of 200 saved players, the list's context on it, and another context whose
    /// saves a test merges by hand.
    private func twoContexts() throws -> (context: ObjectContext, other: ObjectContext, saves: SaveLog) {
        let context = try League.context(self)
        context.automaticallyMergesChangesFromStore = false
        for i in 0..<200 { try League.insertPlayer(context, name: String(format: "P%03d", i), zone: zones[i % 4], score: i % 30) }
        try context.save()
        let other = ObjectContext(store: context.store)
        other.automaticallyMergesChangesFromStore = false
        return (context, other, log(other))
    }

    /// Turns the main queue until no controller places in the background.
    private func drain(_ controllers: [FetchedResultsController<ManagedObject>], _ label: String) {
        let deadline = Date().addingTimeInterval(10)
        while controllers.contains(where: \.isMakingBatchInBackground) && Date() < deadline {
            RunLoop.current.run(until: Date().addingTimeInterval(0.002))
        }
        XCTAssertFalse(controllers.contains(where: \.isMakingBatchInBackground), "\(label): a placement never ended")
    }

    private func placingInBackground(_ controller: FetchedResultsController<ManagedObject>) -> FetchedResultsController<ManagedObject> {
        controller.policy.backgroundThreshold = 0
        controller.policy.placedOneByOne = 2
        controller.policy.placementLimit = 100_000
        return controller
    }

    /// Random chunks of inserts, updates and deletes saved by another context and merged,
    /// with, while they are placed, the list's own context editing and saving, a second
    /// chunk merged, or the controller fetching again: every batch is valid on the sections
    /// before it, and the sections equal a fresh fetch.
    func testChunksSavedElsewhereArePlacedInTheBackgroundInValidBatches() throws {
        let seed = SeededGenerator.seed()
        print("BackgroundPlacementTests seed \(seed) (set SEED to repeat)")
        var rng = SeededGenerator(seed: seed)
        let context = try League.context(self)
        context.automaticallyMergesChangesFromStore = false
        for i in 0..<300 {
            try League.insertPlayer(context, name: "P\(i)", zone: zones.randomElement(using: &rng)!, score: Int.random(in: 0...20, using: &rng))
        }
        try context.save()
        let other = ObjectContext(store: context.store)
        other.automaticallyMergesChangesFromStore = false
        // Both save over each other's edits (the conflict checks are ObjectStoreTests').
        context.mergePolicy = .editWins
        other.mergePolicy = .editWins
        let saves = log(other)

        let watched = try [
            WatchedController("sections by zone, best first") {
                self.placingInBackground(FetchedResultsController(fetchRequest: League.playersByZone(), managedObjectContext: context,
                                                                  sectionNameKeyPath: "zone"))
            },
            WatchedController("sections by zone, score of 5 or more") {
                self.placingInBackground(FetchedResultsController(fetchRequest: League.playersByZone(try! FetchPredicate(format: "score >= 5")),
                                                                  managedObjectContext: context, sectionNameKeyPath: "zone"))
            },
            WatchedController("one section by score, case-insensitive names") {
                self.placingInBackground(FetchedResultsController(
                    fetchRequest: FetchRequest(entityName: "Player", sortDescriptors: [
                        FetchSortDescriptor(key: "score", ascending: false), FetchSortDescriptor(key: "name", options: [.caseInsensitive]),
                    ]),
                    managedObjectContext: context))
            },
        ]
        let controllers = watched.map(\.controller)
        var names = 300
        func chunk(in context: ObjectContext) throws {
            let players = try context.fetch(FetchRequest<ManagedObject>(entityName: "Player"))
            for _ in 0..<Int.random(in: 3...40, using: &rng) {
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<4:
                    names += 1
                    let name = Bool.random(using: &rng) ? "p\(names)" : "P\(names)"
                    try League.insertPlayer(context, name: name, zone: zones.randomElement(using: &rng)!, score: Int.random(in: 0...20, using: &rng))
                case 4..<8:
                    guard let player = players.randomElement(using: &rng), !player.isDeleted else { continue }
                    try player.setValue(Int.random(in: 0...20, using: &rng), forKey: "score")
                    if Bool.random(using: &rng) { try player.setValue(zones.randomElement(using: &rng)!, forKey: "zone") }
                default:
                    guard let player = players.randomElement(using: &rng), !player.isDeleted else { continue }
                    try context.delete(player)
                }
            }
            try context.save()
        }

        var heldWhilePlacing = 0, refetchedWhilePlacing = 0
        for step in 0..<80 {
            let label = "seed \(seed) step \(step)"
            try chunk(in: other)
            merge(saves, into: context)
            if controllers.contains(where: \.isMakingBatchInBackground) {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0:
                    // A tap: the list's own context edits and saves.
                    let players = try context.fetch(FetchRequest<ManagedObject>(entityName: "Player"))
                    if let player = players.randomElement(using: &rng) {
                        try player.setValue(Int.random(in: 0...20, using: &rng), forKey: "score")
                        try context.save()
                        heldWhilePlacing += 1
                    }
                case 1:
                    try chunk(in: other)
                    merge(saves, into: context)
                    heldWhilePlacing += 1
                case 2:
                    // A new request with the same order (another filter of a search field).
                    let controller = watched[0].controller
                    if controller.isMakingBatchInBackground {
                        try controller.setFetchRequest(League.playersByZone())
                        refetchedWhilePlacing += 1
                    }
                default:
                    break
                }
            }
            drain(controllers, label)
            for item in watched {
                guard try item.checkBatches("\(label) [\(item.name)]") else { return }
            }
        }
        for item in watched {
            XCTAssertGreaterThan(item.controller.counts.backgroundPlacements, 40, "seed \(seed) [\(item.name)]: placed in the background")
        }
        XCTAssertGreaterThan(heldWhilePlacing, 10, "seed \(seed): changes came while a placement ran")
        XCTAssertGreaterThan(refetchedWhilePlacing, 3, "seed \(seed): the list was fetched again under a placement")
    }

    /// While a chunk saved elsewhere is placed, the controller answers the list the delegate
    /// knows; a tap saved meanwhile comes in a batch of its own, after the chunk's.
    func testTheListIsTheOneTheDelegateKnowsUntilTheChunksBatch() throws {
        let (context, other, saves) = try twoContexts()
        let controller = placingInBackground(League.byZone(context))
        let (recorder, before) = try recordingBatches(of: controller)

        for i in 0..<50 { try League.insertPlayer(other, name: "Imported \(i)", zone: zones[i % 5], score: (i * 7) % 30) }
        try other.save()
        merge(saves, into: context)
        XCTAssertTrue(controller.isMakingBatchInBackground, "50 objects saved elsewhere are placed off the queue")
        XCTAssertEqual(controller.snapshot, before, "the list stays as the delegate knows it")
        XCTAssertEqual(controller.fetchedObjects?.count, 200)
        XCTAssertTrue(recorder.batches.isEmpty)

        let tapped = try XCTUnwrap(controller.object(at: IndexPath(item: 0, section: 0)))
        try tapped.setValue(-1, forKey: "score")
        try context.save()
        XCTAssertTrue(recorder.batches.isEmpty, "the tap waits for the chunk")

        drain([controller], "chunk and tap")
        XCTAssertEqual(recorder.batches.count, 2)
        let afterChunk = try recorder.batches[0].applied(to: before)
        XCTAssertEqual(recorder.batches[0].objectChanges.filter { $0.type == .insert }.count, 50)
        XCTAssertEqual(recorder.batches[1].objectChanges.map(\.objectID), [tapped.objectID])
        XCTAssertEqual(try recorder.batches[1].applied(to: afterChunk), controller.snapshot)
        XCTAssertEqual(controller.snapshot, try freshSnapshot {
            FetchedResultsController(fetchRequest: League.playersByZone(), managedObjectContext: context, sectionNameKeyPath: "zone")
        })
    }

    /// Below the threshold (a short list), and for the list's own saves, the batch comes
    /// before the call that made the change returns, as Core Data's does.
    func testAShortListAndTheContextsOwnSavesFollowAtOnce() throws {
        let (context, other, saves) = try twoContexts()
        let controller = FetchedResultsController(fetchRequest: League.playersByZone(), managedObjectContext: context, sectionNameKeyPath: "zone")
        controller.policy.placedOneByOne = 2
        controller.policy.placementLimit = 100_000
        let recorder = BatchRecorder<ManagedObject>()
        controller.delegate = recorder
        try controller.performFetch()

        for i in 0..<50 { try League.insertPlayer(other, name: "Imported \(i)", zone: zones[i % 5], score: i % 30) }
        try other.save()
        merge(saves, into: context)
        XCTAssertFalse(controller.isMakingBatchInBackground, "200 rows are below the threshold")
        XCTAssertEqual(recorder.batches.count, 1)
        XCTAssertEqual(controller.fetchedObjects?.count, 250)

        controller.policy.backgroundThreshold = 0
        for i in 0..<50 { try League.insertPlayer(context, name: "Mine \(i)", zone: zones[i % 5], score: i % 30) }
        try context.save()
        XCTAssertFalse(controller.isMakingBatchInBackground, "the context's own save is placed at once")
        XCTAssertEqual(controller.fetchedObjects?.count, 300)
        XCTAssertEqual(controller.counts.backgroundPlacements, 0)
    }
}
