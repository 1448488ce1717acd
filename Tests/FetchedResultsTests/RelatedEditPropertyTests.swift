import FetchedResults
import Foundation
import ObjectStore
import TestSupport
import XCTest

/// Random small and bulk edits of players and of
/// the clubs their sorts, sections and predicates read, against controllers that fetch
/// again (sections from clubs, limit and offset with sections, sorts across `club.rank`)
/// and ones that place changes in memory. Every batch must be valid, replay to the
/// controller's sections and a fresh fetch, name no needless move, and move no object whose
/// values (its own and its club's) did not change.
///
/// `SEED=n` replays one seed; `ROUNDS=k` runs k seeds from it (n, n+1, ...).
final class RelatedEditPropertyTests: XCTestCase {

    func testRandomEditsOfPlayersAndClubs() throws {
        let base = SeededGenerator.seed()
        let rounds = Int(ProcessInfo.processInfo.environment["ROUNDS"] ?? "") ?? 2
        for round in 0..<UInt64(rounds) {
            if try !run(seed: base &+ round) { return }
        }
    }

    /// One random run; false after a failure.
    private func run(seed: UInt64) throws -> Bool {
        let context = try League.context(self)
        // Another context edits saved players and a club (sometimes deletes it); this one merges its saves.
        let league = RandomLeagueEdits(context: context, rng: SeededGenerator(seed: seed), otherContext: .init(
            chance: .oneIn(8), players: 2, bulkPlayers: 90, zone: .half, clubDeletion: (.oneIn(4), whileMoreThan: 2), merge: .didSave))
        league.scores = 0...9
        league.clubNumbers = 0...6
        league.clubChance = .allButOneIn(5)
        league.bulk = .oneIn(4)
        league.tracksEditedPlayers = true
        league.edits = [
            .insertPlayer, .insertPlayer, .deletePlayer(whileMoreThan: 20), .zone, .score, .score, .active, .club, .joinClub,
            .clubRank, .clubRank, .clubName, .insertDrawnClub(whileFewerThan: 7), .deleteClub(whileMoreThan: 2), .name, .name,
        ]
        try league.populate(clubs: 4, players: 60)

        func keyPathController(_ name: String, _ request: FetchRequest<ManagedObject>, _ keyPath: String?) throws -> WatchedController {
            try WatchedController(name, request, in: context, sectionNameKeyPath: keyPath)
        }
        func clubSections(_ name: String, _ request: FetchRequest<ManagedObject>, _ clubRequest: FetchRequest<ManagedObject> = League.clubsByRank()) throws -> WatchedController {
            try WatchedController(name) { League.sectionsFromClubs(request, clubs: clubRequest, in: context) }
        }
        let rankedClubs = FetchRequest<ManagedObject>(entityName: "Club", predicate: try FetchPredicate(format: "rank >= 1"),
                                                      sortDescriptors: [FetchSortDescriptor(key: "name", ascending: false)])
        var limitedItems = League.playersByScore(try FetchPredicate(format: "active == YES"))
        limitedItems.fetchLimit = 12
        limitedItems.fetchOffset = 3
        let byRank = [FetchSortDescriptor(key: "club.rank"), FetchSortDescriptor(key: "score", ascending: false), FetchSortDescriptor(key: "name")]
        var rankSectionsLimited = FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: byRank)
        rankSectionsLimited.fetchLimit = 15
        rankSectionsLimited.fetchOffset = 4
        let clubNameSections = FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "active == YES"),
                                                           sortDescriptors: [FetchSortDescriptor(key: "club.name"), FetchSortDescriptor(key: "score")])
        var acrossRank = FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "club.rank >= 1"),
                                                     sortDescriptors: [FetchSortDescriptor(key: "club.rank", ascending: false),
                                                                       FetchSortDescriptor(key: "name", options: [.caseInsensitive])])
        acrossRank.fetchLimit = 20
        let acrossRankUnlimited = FetchRequest<ManagedObject>(entityName: "Player",
                                                              sortDescriptors: [FetchSortDescriptor(key: "club.rank"), FetchSortDescriptor(key: "score")])
        var zonesLimited = FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score", ascending: false)])
        zonesLimited.fetchLimit = 18
        zonesLimited.fetchOffset = 5
        let zones = FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score")])

        let watched = [
            try clubSections("sections from clubs", League.playersByScore()),
            try clubSections("sections from clubs, limit+offset", limitedItems),
            try clubSections("sections from ranked clubs", League.playersByScore(), rankedClubs),
            try keyPathController("club.rank sections, limit+offset", rankSectionsLimited, "club.rank"),
            try keyPathController("club.rank sections", FetchRequest(entityName: "Player", sortDescriptors: byRank), "club.rank"),
            try keyPathController("club.name sections", clubNameSections, "club.name"),
            try keyPathController("across club.rank, limit", acrossRank, nil),
            try keyPathController("across club.rank", acrossRankUnlimited, nil),
            try keyPathController("zone sections, limit+offset", zonesLimited, "zone"),
            try keyPathController("zone sections", zones, "zone"),
            try keyPathController("by score", League.playersByScore(), nil),
        ]

        for step in 0..<60 {
            try league.step(step)
            for item in watched {
                // README: only objects that changed are reported as moved.
                let passed = try item.checkBatches("seed \(seed) step \(step) [\(item.name)] after \(league.summary)") { change in
                    change.type != .move || league.edited.contains(change.objectID)
                }
                if !passed { return false }
            }
        }
        return true
    }

    /// Sections from clubs that match a predicate: a club that starts to match brings its
    /// (unchanged) players in with it. In the same save a player passes an unchanged
    /// neighbour: only the edited player may move.
    func testASectionEnteringWithItsObjectsDoesNotMoveAnUnchangedNeighbour() throws {
        let context = try League.context(self)
        let clubs = try League.insertClubs(2, into: context)   // ranks 0 and 1
        let players = try [clubs[1], clubs[1], clubs[1], clubs[0]].enumerated().map { i, club in
            try League.insertPlayer(context, name: "P\(i)", score: (i + 1) * 10, club: club)
        }
        try context.save()
        let ranked = FetchRequest<ManagedObject>(entityName: "Club", predicate: try FetchPredicate(format: "rank >= 1"), sortDescriptors: [FetchSortDescriptor(key: "rank")])
        let watched = try WatchedController("sections from ranked clubs") { League.sectionsFromClubs(League.playersByScore(), clubs: ranked, in: context) }

        try players[2].setValue(15, forKey: "score")   // passes P1, which does not change
        try clubs[0].setValue(5, forKey: "rank")        // Club 0 and P3 come in
        try context.save()

        let controller = watched.controller
        XCTAssertEqual(controller.snapshot, try watched.fresh())
        XCTAssertEqual(controller.snapshot.map(\.name), ["Club 1", "Club 0"])
        let batch = try XCTUnwrap(watched.recorder.batches.last)
        XCTAssertEqual(try batch.applied(to: watched.previous), controller.snapshot)
        XCTAssertEqual(batch.objectChanges.filter { $0.type == .move }.map(\.objectID), [players[2].objectID],
                       "only the edited player moves: \(batch.objectChanges)")
    }
}
