import FetchedResults
import Foundation
import ObjectStore
import TestSupport
import XCTest

/// Saves that change more objects than the controller places one by one (an import's chunk,
/// a bulk edit) are fetched again, as is every save under a fetch limit or with sections
/// from their own entity; their batches must name the same moves a small save would: only
/// changed objects move, an unchanged neighbour never does.
final class BulkChangeTests: XCTestCase {

    /// More changed objects than any placement limit of these small stores.
    private static let bulk = 80

    /// Players "P000", "P001"... scored 0, 10, 20..., saved.
    private func makeStore(players: Int, zone: (Int) -> String? = { _ in nil }) throws -> (ObjectContext, [ManagedObject]) {
        let context = try League.context(self)
        let made = try (0..<players).map { i in
            try League.insertPlayer(context, name: String(format: "P%03d", i), zone: zone(i), score: i * 10)
        }
        try context.save()
        return (context, made)
    }

    /// The object changes of all batches since the last checkpoint of `watched`.
    private func changes(_ watched: WatchedController) -> [ObjectChange] { watched.recorder.batches.flatMap(\.objectChanges) }

    /// All batches since the last checkpoint of `watched`, as one.
    private func delivered(_ watched: WatchedController) -> ChangeBatch {
        ChangeBatch(sectionChanges: watched.recorder.batches.flatMap(\.sectionChanges), objectChanges: changes(watched))
    }

    private let byScore = League.playersByScore()

    func testAnEditedObjectMovesPastItsUnchangedNeighbourInABulkSave() throws {
        let (context, players) = try makeStore(players: 200)
        let watched = try WatchedController("by score", byScore, in: context)
        // P012 moves before P011, which is unchanged; many others change in place.
        try players[12].setValue(105, forKey: "score")
        for player in players[20..<(20 + Self.bulk)] { try player.setValue(player.value(forKey: "name") as! String + "!", forKey: "name") }
        try context.save()

        XCTAssertEqual(try watched.replayed(), watched.controller.snapshot)
        let batch = delivered(watched)
        let moves = batch.objectChanges.filter { $0.type == .move }
        XCTAssertEqual(moves.map(\.objectID), [players[12].objectID], "only the edited object moves: \(moves)")
        XCTAssertEqual(moves.first?.indexPath, IndexPath(item: 12, section: 0))
        XCTAssertEqual(moves.first?.newIndexPath, IndexPath(item: 11, section: 0))
        XCTAssertFalse(batch.objectChanges.contains { $0.objectID == players[11].objectID }, "the unchanged neighbour is untouched")
        XCTAssertEqual(batch.objectChanges.filter { $0.type == .update }.count, Self.bulk)
    }

    func testABulkSaveThatSwapsTwoObjectsMovesOnlyOneOfThem() throws {
        let (context, players) = try makeStore(players: 200)
        let watched = try WatchedController("by score", byScore, in: context)
        try players[50].setValue(605, forKey: "score")   // after P060
        try players[60].setValue(495, forKey: "score")   // before P050
        for player in players[100..<(100 + Self.bulk)] { try player.setValue(player.value(forKey: "name") as! String + "!", forKey: "name") }
        try context.save()

        XCTAssertEqual(try watched.replayed(), watched.controller.snapshot)
        let batch = delivered(watched)
        let moved = Set(batch.objectChanges.filter { $0.type == .move }.map(\.objectID))
        XCTAssertEqual(moved.count, 2, "both edited objects crossed the unchanged ones between them")
        XCTAssertEqual(moved, [players[50].objectID, players[60].objectID])
        for player in players[51..<60] {
            XCTAssertFalse(batch.objectChanges.contains { $0.objectID == player.objectID }, "\(player.objectID) did not change")
        }
    }

    func testABulkSaveWithSectionsInsertsAndDeletesSectionsInOrder() throws {
        let zones = ["Asia", "Europe", "Oceania"]
        let (context, players) = try makeStore(players: 120) { zones[$0 % 3] }
        let request = FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score")])
        let watched = try WatchedController("by zone", request, in: context, sectionNameKeyPath: "zone")
        // Every Oceania player moves to Africa (a new first section, Oceania goes); Europe's
        // players change in place.
        for (i, player) in players.enumerated() where i % 3 == 2 { try player.setValue("Africa", forKey: "zone") }
        for (i, player) in players.enumerated() where i % 3 == 1 { try player.setValue(i * 10 + 1, forKey: "score") }
        try context.save()

        XCTAssertEqual(try watched.replayed(), watched.controller.snapshot)
        let batch = delivered(watched)
        XCTAssertEqual(watched.controller.snapshot, try watched.fresh())
        XCTAssertEqual(watched.controller.snapshot.map(\.name), ["Africa", "Asia", "Europe"])
        XCTAssertEqual(batch.sectionChanges.map { "\($0.type) \($0.index) \($0.name)" }, ["delete 2 Oceania", "insert 0 Africa"])
        XCTAssertEqual(batch.objectChanges.filter { $0.type == .move }.count, 40)
        XCTAssertEqual(batch.objectChanges.filter { $0.type == .update }.count, 40, "Europe's players keep their places")
        XCTAssertFalse(batch.objectChanges.contains { change in players.enumerated().contains { $0.offset % 3 == 0 && $0.element.objectID == change.objectID } },
                       "Asia did not change")
    }

    func testABulkSaveUnderAFetchLimitOnlyInsertsAndDeletesUnchangedObjects() throws {
        let (context, players) = try makeStore(players: 200)
        var request = byScore
        request.fetchLimit = 20
        request.fetchOffset = 5
        let watched = try WatchedController("limit and offset", request, in: context)
        // Three of the window leave for the end; many objects past the window change.
        for player in players[7..<10] { try player.setValue(5_000 + (player.value(forKey: "score") as! Int), forKey: "score") }
        try players[14].setValue(115, forKey: "score")   // moves before two unchanged ones, stays in the window
        for player in players[100..<(100 + Self.bulk)] { try player.setValue(player.value(forKey: "name") as! String + "!", forKey: "name") }
        try context.save()

        XCTAssertEqual(try watched.replayed(), watched.controller.snapshot)
        let batch = delivered(watched)
        XCTAssertEqual(watched.controller.snapshot, try watched.fresh())
        XCTAssertEqual(batch.objectChanges.filter { $0.type == .move }.map(\.objectID), [players[14].objectID])
        XCTAssertEqual(Set(batch.objectChanges.filter { $0.type == .delete }.map(\.objectID)), Set(players[7..<10].map(\.objectID)))
        XCTAssertEqual(Set(batch.objectChanges.filter { $0.type == .insert }.map(\.objectID)), Set(players[25..<28].map(\.objectID)),
                       "three unchanged objects enter the window")
    }

    /// A small save: a section whose objects all changed is empty for a moment while the
    /// changes are placed; a new section must still go in its place (here between two).
    func testANewSectionGoesBeforeASectionWhoseObjectsAllChanged() throws {
        let zones = ["Asia", "Oceania"]
        let (context, players) = try makeStore(players: 6) { zones[$0 % 2] }
        let request = FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score")])
        let watched = try WatchedController("by zone", request, in: context, sectionNameKeyPath: "zone")
        for (i, player) in players.enumerated() where i % 2 == 1 { try player.setValue(1_000 - i, forKey: "score") }
        let newcomer = try context.insert(entityName: "Player")
        try newcomer.setValue("New", forKey: "name")
        try newcomer.setValue("Europe", forKey: "zone")
        try context.save()

        XCTAssertEqual(watched.controller.snapshot.map(\.name), ["Asia", "Europe", "Oceania"])
        XCTAssertEqual(watched.controller.snapshot, try watched.fresh())
        XCTAssertEqual(try watched.replayed().map(\.name), ["Asia", "Europe", "Oceania"])
    }

    /// Sections from their own entity: a player moving past an unchanged one moves alone, a
    /// club whose rank changes moves as a section with its players, a renamed club is a
    /// section update.
    func testWithSectionsFromClubsOnlyWhatChangedMoves() throws {
        let (context, players) = try makeStore(players: 30)
        let clubs = try League.insertClubs(3, into: context)
        for (i, player) in players.enumerated() { try player.setValue(clubs[i % 3], forKey: "club") }
        try context.save()
        let watched = try WatchedController("sections from clubs") { League.sectionsFromClubs(League.playersByScore(), in: context) }
        let controller = watched.controller

        // Club 0 holds P000, P003, P006, ...: P009 goes before P006.
        try players[9].setValue(55, forKey: "score")
        try context.save()
        XCTAssertEqual(try watched.replayed(), controller.snapshot)
        XCTAssertEqual(controller.snapshot, try watched.fresh())
        XCTAssertEqual(changes(watched).filter { $0.type == .move }.map(\.objectID), [players[9].objectID])
        XCTAssertFalse(changes(watched).contains { $0.objectID == players[6].objectID }, "the unchanged neighbour is untouched")

        watched.checkpoint()
        try clubs[2].setValue(-1, forKey: "rank")
        try clubs[1].setValue("Club One", forKey: "name")
        try context.save()
        XCTAssertEqual(try watched.replayed(), controller.snapshot)
        XCTAssertEqual(controller.snapshot, try watched.fresh())
        XCTAssertEqual(controller.snapshot.map(\.name), ["Club 2", "Club 0", "Club One"])
        XCTAssertEqual(changes(watched), [], "no player changed")
        let sectionChanges = watched.recorder.batches.flatMap(\.sectionChanges)
        XCTAssertEqual(sectionChanges.filter { $0.type == .move }.count, 1)
        XCTAssertTrue(sectionChanges.contains { $0.type == .update && $0.name == "Club One" } || sectionChanges.contains { $0.type == .move && $0.name == "Club One" })
    }

    /// Random bulk edits of the players' own values: every batch is valid, ends in a fresh
    /// fetch, moves only objects that were edited and only when needed, and never touches
    /// an unedited object except to let it enter or leave a limited window.
    func testRandomBulkSavesMoveOnlyEditedObjects() throws {
        let seed = SeededGenerator.seed()
        var rng = SeededGenerator(seed: seed)
        let (context, players) = try makeStore(players: 150) { _ in League.zones.randomElement(using: &rng)! }
        let league = RandomLeagueEdits(context: context, rng: rng, players: players)
        league.newPlayer = [.numberedName, .score, .zone]
        league.names = (0..<1_000).map { "R\($0)" }
        league.scores = 0...2_000
        league.bulk = .always
        league.saves = .always
        league.tracksEditedPlayers = true
        league.edits = [.insertPlayer, .deletePlayer(whileMoreThan: 100), .score, .score, .zone, .active, .name, .name, .name, .name]
        let byZone = FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score", ascending: false)])
        var limited = byScore
        limited.fetchLimit = 30
        limited.fetchOffset = 10
        let watched = [
            try WatchedController("by score", byScore, in: context),
            try WatchedController("sections by zone", byZone, in: context, sectionNameKeyPath: "zone"),
            try WatchedController("limit and offset", limited, in: context),
            try WatchedController("active only", League.playersByScore(try FetchPredicate(format: "active == YES")), in: context),
        ]

        for step in 0..<25 {
            try league.step(step)
            for item in watched {
                // An unedited object may only enter or leave a limited window (inserted
                // objects are new to every batch).
                let passed = try item.checkBatches("seed \(seed) step \(step) [\(item.name)] after \(league.summary)") { change in
                    league.edited.contains(change.objectID) || change.type == .insert
                        || (change.type == .delete && item.controller.fetchRequest.fetchLimit > 0)
                }
                if !passed { return }
            }
        }
    }
}

/// A bulk save with a controller watching writes each changed row once: the controller
/// computes its batch from the committed store, not by writing the pending changes into a
/// rolled-back transaction first.
final class BulkSaveStatementTests: XCTestCase {
    func testABulkSaveWithAControllerWritesEachRowOnce() throws {
        let log = SQLLog()
        let (_, context) = try WorldCup.open(in: temporaryFolder(self), sqlLog: log)
        for i in 0..<300 { try WorldCup.insert("Extra \(i)", ["Africa", "Asia", "Europe"][i % 3], wins: i % 7, into: context) }
        try context.save()
        let controller = WorldCup.controller(context)
        let recorder = BatchRecorder<WorldCup.Team>()
        controller.delegate = recorder
        try controller.performFetch()
        let teams = try context.fetch(FetchRequest<WorldCup.Team>(predicate: try FetchPredicate(format: "teamName BEGINSWITH 'Extra'"),
                                                                  sortDescriptors: [FetchSortDescriptor(key: "teamName")]))
        for team in teams { team.wins += 1 }   // more than the controller places one by one
        log.reset()
        try context.save()
        XCTAssertEqual(recorder.batches.count, 1)
        let updates = log.statements.filter { $0.uppercased().hasPrefix("UPDATE \"TEAM\"") }
        XCTAssertEqual(updates.count, teams.count, "each changed row written once: \(updates.count) UPDATEs for \(teams.count) rows")
        XCTAssertFalse(log.statements.contains { $0.uppercased().hasPrefix("ROLLBACK") }, "no write rolled back to compute the batch")
    }

    /// Many objects changed in an attribute that does not name their section (`wins += 1`
    /// for a zone's teams, saved by another context and merged, which leaves them faults
    /// here) stay in their sections or leave the results: the controller fetches those
    /// sections' row keys again and reads none of the changed objects' rows.
    func testABulkUpdateOutsideTheSectionAttributeReadsNoChangedRow() throws {
        let log = SQLLog()
        let (store, context) = try WorldCup.open(in: temporaryFolder(self), sqlLog: log)
        context.automaticallyMergesChangesFromStore = false
        let zones = ["Africa", "Asia", "Europe", "North America", "Oceania", "South America"]
        for i in 0..<600 { try WorldCup.insert("Extra \(i)", zones[i % zones.count], wins: i % 7, into: context) }
        try context.save()
        let controller = WorldCup.controller(context)
        controller.policy.placementLimit = 0   // every change fetched again
        let recorder = BatchRecorder<WorldCup.Team>()
        controller.delegate = recorder
        try controller.performFetch()
        for team in controller.fetchedObjects ?? [] { _ = team.teamName }   // shown: loaded here

        let other = ObjectContext(store: store)
        other.automaticallyMergesChangesFromStore = false
        var saved: [ObjectChanges] = []
        let token = other.addObserver { event in if case .didSave(let changes) = event { saved.append(changes) } }
        defer { token.cancel() }
        let teams = try other.fetch(FetchRequest<WorldCup.Team>(predicate: try FetchPredicate(format: "qualifyingZone == 'Africa'")))
        for (n, team) in teams.enumerated() { team.wins = 50 + n % 3 }
        try other.save()

        log.reset()
        let partialRefetches = controller.counts.partialRefetches
        for changes in saved { context.mergeChanges(fromContextDidSave: changes) }
        XCTAssertEqual(recorder.batches.count, 1)
        XCTAssertEqual(controller.counts.partialRefetches, partialRefetches + 1, "the zone's row keys fetched again")
        // One query: the zone's row keys. No changed row read, in one query or one by one.
        let selects = log.statements.filter { $0.uppercased().hasPrefix("SELECT") }
        XCTAssertEqual(selects.count, 1, "the controller read more than the zone's row keys: \(selects.map { $0.prefix(120) })")
        XCTAssertTrue(selects.allSatisfy { $0.contains(#""qualifyingZone" IN"#) }, "\(selects.map { $0.prefix(120) })")
        let fresh = WorldCup.controller(context)
        try fresh.performFetch()
        XCTAssertEqual(controller.snapshot, fresh.snapshot, "the list after the merge differs from a fresh fetch")
    }
}
