import FetchedResults
import Foundation
import ObjectStore
import TestSupport
import XCTest

/// Many changes saved elsewhere on a long list (a joining desktop's pages, written by the
/// sharing engine's store) are made into a batch by fetching the results again on a reader
/// of the store, off the context's queue: the list stays the one the delegate knows until the
/// batch, what is committed or edited while the fetch runs is shown with it or after it,
/// never twice and never lost, and every batch is valid.
final class BackgroundRefetchTests: XCTestCase {
    private let zones = League.zones

    /// A store of 300 players, the list's context following it on the main queue, and
    /// another store on the same file (as another process) with a context that writes pages.
    private func stores() throws -> (context: ObjectContext, other: ObjectContext, following: ObservationToken) {
        let url = try temporaryFolder(self).appendingPathComponent("league.sqlite")
        let store = try PersistentStore(url: url, model: League.model())
        let context = ObjectContext(store: store)
        for i in 0..<300 { try League.insertPlayer(context, name: "P\(i)", zone: zones[i % zones.count], score: i % 21) }
        try context.save()
        let following = try context.followStore(interval: .milliseconds(50))
        let other = ObjectContext(store: try PersistentStore(url: url, model: League.model()))
        // Both save over each other's edits (the conflict checks are ObjectStoreTests').
        context.mergePolicy = .editWins
        other.mergePolicy = .editWins
        return (context, other, following)
    }

    /// Every merged change fetches again in the background, however short the list.
    private func refetchingInBackground(_ controller: FetchedResultsController<ManagedObject>) -> FetchedResultsController<ManagedObject> {
        controller.policy.backgroundThreshold = 0
        controller.policy.placementLimit = 0
        return controller
    }

    /// Turns the main queue until no controller makes a batch in the background and the
    /// context has taken in every commit.
    private func drain(_ controllers: [FetchedResultsController<ManagedObject>], _ context: ObjectContext, _ label: String) throws {
        let deadline = Date().addingTimeInterval(10)
        let settled = {
            try !controllers.contains(where: \.isMakingBatchInBackground)
                && context.mergedHistoryToken == context.store.currentHistoryToken()
        }
        while try !settled() && Date() < deadline { drainMainQueue(timeout: 0.01) }
        XCTAssertTrue(try settled(), "\(label): a batch never ended, or a commit was never taken in")
    }

    /// Random pages of inserts, updates and deletes committed by another store, sometimes
    /// two before the context takes the first in, with, while their batch is fetched, another
    /// page committed, the list's context editing (saved or not yet), or a new request: every
    /// batch is valid on the sections before it, and the sections equal a fresh fetch.
    func testPagesSavedElsewhereAreFetchedAgainInTheBackgroundInValidBatches() throws {
        let seed = SeededGenerator.seed()
        print("BackgroundRefetchTests seed \(seed) (set SEED to repeat)")
        var rng = SeededGenerator(seed: seed)
        let (context, other, following) = try stores()
        // Pages of more than 30 changes are read from the history on a reader, ahead of the
        // context, when it falls behind (a page committed while a fetch runs): both ways mix.
        context.historyReadAheadMinimum = 30
        let watched = try [
            WatchedController("sections by zone, best first") {
                self.refetchingInBackground(FetchedResultsController(fetchRequest: League.playersByZone(), managedObjectContext: context,
                                                                     sectionNameKeyPath: "zone"))
            },
            WatchedController("sections by zone, score of 5 or more") {
                self.refetchingInBackground(FetchedResultsController(fetchRequest: League.playersByZone(try! FetchPredicate(format: "score >= 5")),
                                                                     managedObjectContext: context, sectionNameKeyPath: "zone"))
            },
            WatchedController("the first 100 by score") {
                var request = League.playersByScore()
                request.fetchLimit = 100
                return self.refetchingInBackground(FetchedResultsController(fetchRequest: request, managedObjectContext: context))
            },
        ]
        let controllers = watched.map(\.controller)
        var names = 300
        func page(in context: ObjectContext, size: ClosedRange<Int>) throws {
            let players = try context.fetch(FetchRequest<ManagedObject>(entityName: "Player"))
            for _ in 0..<Int.random(in: size, using: &rng) {
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<5:
                    names += 1
                    try League.insertPlayer(context, name: "P\(names)", zone: zones.randomElement(using: &rng)!, score: Int.random(in: 0...20, using: &rng))
                case 5..<8:
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

        var whileFetching = [0, 0, 0, 0]
        for step in 0..<60 {
            let label = "seed \(seed) step \(step)"
            try page(in: other, size: 5...60)
            let taken = try context.store.currentHistoryToken()
            // Sometimes the next page is committed before the context takes this one in: the
            // fetches read both, and the context takes the second in when they end.
            if Int.random(in: 0..<4, using: &rng) == 0 { try page(in: other, size: 5...60) }
            // Taken in now, as the change feed would on the next turn: the fetches start.
            XCTAssertTrue(context.takeStoreChanges(through: taken), label)
            if controllers.contains(where: \.isMakingBatchInBackground) {
                let what = Int.random(in: 0..<5, using: &rng)
                switch what {
                case 0:
                    // The next page, committed while the fetch runs: it may read it or not.
                    try page(in: other, size: 5...60)
                case 1:
                    // A tap, or a new player, saved by the list's own context.
                    try page(in: context, size: 1...2)
                case 2:
                    // An edit not saved yet when the fetch ends: the batch is made at once, with it.
                    let players = try context.fetch(FetchRequest<ManagedObject>(entityName: "Player"))
                    try players.randomElement(using: &rng)?.setValue(Int.random(in: 0...20, using: &rng), forKey: "score")
                    drainMainQueue(until: { !controllers.contains(where: \.isMakingBatchInBackground) }, timeout: 2)
                    try context.save()
                case 3:
                    // A new request with the same order (another filter of a search field).
                    try watched[0].controller.setFetchRequest(League.playersByZone())
                default:
                    break
                }
                whileFetching[min(what, 3)] += 1
            }
            try drain(controllers, context, label)
            for item in watched {
                guard try item.checkBatches("\(label) [\(item.name)]") else { return }
            }
        }
        for item in watched {
            XCTAssertGreaterThan(item.controller.counts.backgroundRefetches, 40, "seed \(seed) [\(item.name)]: fetched in the background")
        }
        let counts = controllers.map(\.counts)
        XCTAssertGreaterThan(counts.map(\.backgroundRefetchesWithHeldChanges).reduce(0, +), 0,
                             "seed \(seed): changes held while a fetch ran were shown with it")
        XCTAssertGreaterThan(counts.map(\.backgroundRefetchesNotShown).reduce(0, +), 0, "seed \(seed): a fetch was not shown and made again")
        XCTAssertGreaterThan(context.historyReads.readAhead, 5, "seed \(seed): pages read ahead on a reader: \(context.historyReads)")
        XCTAssertGreaterThan(context.historyReads.onQueue, 5, "seed \(seed): and on the context's queue: \(context.historyReads)")
        XCTAssertTrue(whileFetching.allSatisfy { $0 > 3 }, "seed \(seed): each kind of change came while a fetch ran: \(whileFetching)")
        withExtendedLifetime(following) {}
    }

    /// While a controller fetches on a reader, its context holds the store's changes back:
    /// a page committed meanwhile is taken in once the hold ends, not before, so that the
    /// context is never past the moment the read found, however long the read takes.
    func testAContextHoldsTheStoresChangesBackUntilReleased() throws {
        let (context, other, following) = try stores()
        var told = 0
        let observer = context.addObserver { event in if case .objectsDidChange = event { told += 1 } }
        let before = context.mergedHistoryToken
        context.holdStoreChanges()
        context.holdStoreChanges()
        for i in 0..<20 { try League.insertPlayer(other, name: "Held \(i)", zone: "Asia", score: i) }
        try other.save()
        drainMainQueue(timeout: 0.3)
        XCTAssertEqual(context.mergedHistoryToken, before, "nothing taken in while held")
        XCTAssertEqual(told, 0)
        context.releaseStoreChanges()
        drainMainQueue(timeout: 0.3)
        XCTAssertEqual(context.mergedHistoryToken, before, "held until the last hold ends")
        context.releaseStoreChanges()
        drainMainQueue(until: { context.mergedHistoryToken == (try? context.store.currentHistoryToken()) }, timeout: 5)
        XCTAssertEqual(context.mergedHistoryToken, try context.store.currentHistoryToken(), "taken in once released")
        XCTAssertEqual(told, 1)
        withExtendedLifetime((observer, following)) {}
    }

    /// While a page committed elsewhere is fetched again, the controller answers the list the
    /// delegate knows; a tap saved meanwhile is in the page's batch or the next, never lost.
    func testTheListIsTheOneTheDelegateKnowsUntilThePagesBatch() throws {
        let (context, other, following) = try stores()
        let controller = refetchingInBackground(League.byZone(context))
        let (recorder, before) = try recordingBatches(of: controller)

        for i in 0..<50 { try League.insertPlayer(other, name: "Page \(i)", zone: zones[i % 5], score: (i * 7) % 21) }
        try other.save()
        XCTAssertTrue(context.takeStoreChanges(through: try context.store.currentHistoryToken()))
        XCTAssertTrue(controller.isMakingBatchInBackground, "a page saved elsewhere is fetched off the queue")
        XCTAssertEqual(controller.snapshot, before, "the list stays as the delegate knows it")
        XCTAssertEqual(controller.fetchedObjects?.count, 300)
        XCTAssertTrue(recorder.batches.isEmpty)

        let tapped = try XCTUnwrap(controller.object(at: IndexPath(item: 0, section: 0)))
        try tapped.setValue(-1, forKey: "score")
        try context.save()
        XCTAssertTrue(recorder.batches.isEmpty, "the tap waits for the page")

        try drain([controller], context, "page and tap")
        XCTAssertFalse(recorder.batches.isEmpty)
        let replayed = try recorder.batches.reduce(before) { try $1.applied(to: $0) }
        XCTAssertEqual(replayed, controller.snapshot, "the batches are valid")
        XCTAssertEqual(recorder.batches.flatMap(\.objectChanges).filter { $0.type == .insert }.count, 50, "each new row inserted once")
        XCTAssertEqual(controller.fetchedObjects?.count, 350)
        XCTAssertEqual(try controller.object(at: XCTUnwrap(controller.indexPath(for: tapped))).value(forKey: "score") as? Int, -1)
        XCTAssertEqual(controller.snapshot, try freshSnapshot {
            FetchedResultsController(fetchRequest: League.playersByZone(), managedObjectContext: context, sectionNameKeyPath: "zone")
        })
        XCTAssertEqual(controller.counts.backgroundRefetches, 1)
        withExtendedLifetime(following) {}
    }

    /// With an edit not saved yet, a page saved elsewhere cannot be fetched on a reader (the
    /// store does not hold the edit): its batch is made at once, fetching only the sections
    /// the page touched, as it was before fetches in the background.
    func testAPageMetWithAnUnsavedEditFetchesOnlyTheSectionsItTouched() throws {
        let (context, other, following) = try stores()
        let controller = refetchingInBackground(League.byZone(context))
        let (recorder, before) = try recordingBatches(of: controller)
        let edited = try XCTUnwrap(controller.object(at: IndexPath(item: 0, section: 0)))
        try edited.setValue("Edited, not saved", forKey: "name")
        context.processPendingChanges()
        let partial = controller.counts.partialRefetches

        for i in 0..<50 { try League.insertPlayer(other, name: "Page \(i)", zone: "Asia", score: i % 21) }
        try other.save()
        XCTAssertTrue(context.takeStoreChanges(through: try context.store.currentHistoryToken()))
        XCTAssertFalse(controller.isMakingBatchInBackground, "unsaved edits: made at once")
        XCTAssertEqual(controller.counts.backgroundRefetches, 0)
        XCTAssertEqual(controller.counts.partialRefetches, partial + 1, "only the sections the page touched are fetched again")
        let replayed = try recorder.batches.reduce(before) { try $1.applied(to: $0) }
        XCTAssertEqual(replayed, controller.snapshot, "the batches are valid")
        XCTAssertEqual(controller.fetchedObjects?.count, 350)
        XCTAssertEqual(controller.snapshot, try freshSnapshot {
            FetchedResultsController(fetchRequest: League.playersByZone(), managedObjectContext: context, sectionNameKeyPath: "zone")
        })
        withExtendedLifetime(following) {}
    }
}
