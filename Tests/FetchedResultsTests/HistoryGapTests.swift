import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// A controller whose context follows the store and falls behind the pruned change history:
/// it cannot know which rows came and went, so it fetches again and reports the difference.
final class HistoryGapTests: XCTestCase {
    func testAControllerBehindThePrunedHistoryEndsEqualToAFreshFetch() throws {
        for batchSize in [0, 20] {
            var random = SeededGenerator(seed: SeededGenerator.seed())
            let url = try temporaryFolder(self).appendingPathComponent("league-\(batchSize).sqlite")
            let store = try PersistentStore(url: url, model: League.model())
            let setup = ObjectContext(store: store)
            let zones: [String?] = ["Africa", "Asia", "Europe", nil]
            for index in 0..<300 {
                try League.insertPlayer(setup, name: "P\(index)", zone: zones.randomElement(using: &random)!, score: Int.random(in: 0...5, using: &random))
            }
            try setup.save()

            let reader = ObjectContext(store: store)
            var request = League.playersByZone(try FetchPredicate(format: "score >= 1"))
            request.fetchBatchSize = batchSize
            let watched = try WatchedController("by zone", request, in: reader, sectionNameKeyPath: "zone")
            let controller = watched.controller
            _ = controller.object(at: IndexPath(item: 0, section: 0))  // some objects registered, most not
            let following = try reader.followStore(interval: .milliseconds(20))

            // Another store on the file (as another process) with a tiny history: one save
            // of deletes, updates and inserts prunes past the reader's token.
            let writer = try PersistentStore(url: url, model: League.model())
            writer.historyLimit = 4
            let other = ObjectContext(store: writer)
            let players = try other.fetch(FetchRequest<ManagedObject>(entityName: "Player"))
            for (index, player) in players.enumerated() {
                if index % 17 == 0 {
                    try other.delete(player)
                } else if index % 5 == 0 {
                    try player.setValue(Int.random(in: 0...5, using: &random), forKey: "score")
                    try player.setValue(zones.randomElement(using: &random)!, forKey: "zone")
                }
            }
            for index in 0..<20 {
                try League.insertPlayer(other, name: "New\(index)", zone: zones.randomElement(using: &random)!, score: Int.random(in: 0...5, using: &random))
            }
            let token = try store.currentHistoryToken()
            try other.save()
            XCTAssertThrowsError(try store.changes(since: token), "the reader's token was pruned") { error in
                XCTAssertTrue(error is HistoryGap)
            }

            drainMainQueue(until: { !watched.recorder.batches.isEmpty })
            drainMainQueue(timeout: 0.2)
            XCTAssertEqual(watched.recorder.batches.count, 1, "one batch for the whole gap")
            XCTAssertEqual(try watched.replayed(), controller.snapshot, "the batch is valid")
            let fresh = try freshSnapshot { FetchedResultsController(fetchRequest: request, managedObjectContext: ObjectContext(store: store), sectionNameKeyPath: "zone") }
            XCTAssertEqual(controller.snapshot, fresh, "rows deleted and inserted elsewhere are followed (batch size \(batchSize))")
            withExtendedLifetime(following) {}
        }
    }
}
