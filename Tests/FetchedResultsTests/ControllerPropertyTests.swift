import FetchedResults
import Foundation
import ObjectStore
import TestSupport
import XCTest

/// Invariant 2: after every random edit, the batch each controller delivers turns its
/// previous sections into exactly its new sections by the batch rules, and those equal a
/// fresh fetch.
final class ControllerPropertyTests: XCTestCase {

    func testEveryBatchIsValidAndEndsInAFreshFetch() throws {
        let seed = SeededGenerator.seed()
        let context = try League.context(self)
        // A second context edits and saves on its own; this one merges the updates it names.
        let league = RandomLeagueEdits(context: context, rng: SeededGenerator(seed: seed),
                                       otherContext: .init(chance: .oneIn(6), players: 1, merge: .declaredUpdates))
        league.zones = ["Africa", "Asia", "Europe", "Oceania", "South America", nil]
        league.edits = [
            .insertPlayer, .insertPlayer, .deletePlayer(whileMoreThan: 5), .zone, .score, .score, .active, .club,
            .clubRank, .clubName, .insertClub(whileFewerThan: 6), .name,
        ]
        try league.populate(clubs: 4, players: 25)

        var limited = League.playersByZone(try FetchPredicate(format: "active == YES"))
        limited.fetchLimit = 6
        limited.fetchOffset = 2
        let watched = [
            try WatchedController("sections by zone, active only", League.playersByZone(try FetchPredicate(format: "active == YES AND score >= 1")),
                                  in: context, sectionNameKeyPath: "zone"),
            try WatchedController("zones descending",
                                  FetchRequest(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "zone", ascending: false), FetchSortDescriptor(key: "name")]),
                                  in: context, sectionNameKeyPath: "zone"),
            try WatchedController("one section, sorted across the club",
                                  FetchRequest(entityName: "Player", predicate: try FetchPredicate(format: "club.rank >= 1"),
                                               sortDescriptors: [FetchSortDescriptor(key: "club.rank", ascending: false), FetchSortDescriptor(key: "name", options: [.caseInsensitive])]),
                                  in: context),
            try WatchedController("limit and offset", limited, in: context, sectionNameKeyPath: "zone"),
            try WatchedController("sections from clubs") { League.sectionsFromClubs(League.playersByScore(), in: context) },
        ]
        // Every change fetched again (as many changed objects are), only the sections they
        // left or entered where it can be.
        let partial = try [League.playersByZone(try FetchPredicate(format: "active == YES AND score >= 1")),
                           FetchRequest(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "zone", ascending: false), FetchSortDescriptor(key: "name")])]
            .enumerated().map { n, request in
                try WatchedController("sections by zone fetched again, \(n)") {
                    let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "zone")
                    controller.policy.placementLimit = 0
                    return controller
                }
            }

        for step in 0..<120 {
            try league.step(step)
            for item in watched + partial {
                guard try item.checkBatches("seed \(seed) step \(step) [\(item.name)] after \(league.summary)") else { return }
            }
        }
        for item in partial {
            XCTAssertGreaterThan(item.controller.counts.partialRefetches, 20, "seed \(seed) [\(item.name)]: sections fetched again on their own")
        }
    }
}
