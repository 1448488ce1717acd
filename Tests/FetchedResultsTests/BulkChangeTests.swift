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

    private func makeStore(players: Int, zone: (Int) -> String? = { _ in nil }) throws -> (ObjectContext, [ManagedObject]) {
        let store = try PersistentStore(url: temporaryFolder(self).appendingPathComponent("league.sqlite"), model: League.model())
        let context = ObjectContext(store: store)
        var made: [ManagedObject] = []
        for i in 0..<players {
            let player = try context.insert(entityName: "Player")
            try player.setValue(String(format: "P%03d", i), forKey: "name")
            try player.setValue(i * 10, forKey: "score")
            try player.setValue(zone(i), forKey: "zone")
            made.append(player)
        }
        try context.save()
        return (context, made)
    }

    private func watch(_ context: ObjectContext, _ request: FetchRequest<ManagedObject>,
                       sectionNameKeyPath: String? = nil) throws -> (FetchedResultsController<ManagedObject>, BatchRecorder<ManagedObject>) {
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: sectionNameKeyPath)
        let recorder = BatchRecorder<ManagedObject>()
        controller.delegate = recorder
        try controller.performFetch()
        return (controller, recorder)
    }

    private func fresh(_ context: ObjectContext, _ request: FetchRequest<ManagedObject>, sectionNameKeyPath: String? = nil) throws -> [SectionSnapshot] {
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: sectionNameKeyPath)
        try controller.performFetch()
        return controller.snapshot
    }

    /// The batches applied to `sections` in turn (objects saved for the first time are
    /// renamed by the batches themselves).
    private func replay(_ batches: [ChangeBatch], from sections: [SectionSnapshot], context: ObjectContext) throws -> [SectionSnapshot] {
        var state = sections
        for batch in batches { state = try batch.applied(to: state) }
        return state
    }

    /// The object changes of all batches since `recorder` was last emptied.
    private func changes(_ recorder: BatchRecorder<ManagedObject>) -> [ObjectChange] { recorder.batches.flatMap(\.objectChanges) }

    private let byScore = FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "name")])

    func testAnEditedObjectMovesPastItsUnchangedNeighbourInABulkSave() throws {
        let (context, players) = try makeStore(players: 200)
        let (controller, recorder) = try watch(context, byScore)
        let before = controller.snapshot
        // P012 moves before P011, which is unchanged; many others change in place.
        try players[12].setValue(105, forKey: "score")
        for player in players[20..<(20 + Self.bulk)] { try player.setValue(player.value(forKey: "name") as! String + "!", forKey: "name") }
        try context.save()

        XCTAssertEqual(try replay(recorder.batches, from: before, context: context), controller.snapshot)
        let batch = ChangeBatch(sectionChanges: recorder.batches.flatMap(\.sectionChanges), objectChanges: changes(recorder))
        let moves = batch.objectChanges.filter { $0.type == .move }
        XCTAssertEqual(moves.map(\.objectID), [players[12].objectID], "only the edited object moves: \(moves)")
        XCTAssertEqual(moves.first?.indexPath, IndexPath(item: 12, section: 0))
        XCTAssertEqual(moves.first?.newIndexPath, IndexPath(item: 11, section: 0))
        XCTAssertFalse(batch.objectChanges.contains { $0.objectID == players[11].objectID }, "the unchanged neighbour is untouched")
        XCTAssertEqual(batch.objectChanges.filter { $0.type == .update }.count, Self.bulk)
    }

    func testABulkSaveThatSwapsTwoObjectsMovesOnlyOneOfThem() throws {
        let (context, players) = try makeStore(players: 200)
        let (controller, recorder) = try watch(context, byScore)
        let before = controller.snapshot
        try players[50].setValue(605, forKey: "score")   // after P060
        try players[60].setValue(495, forKey: "score")   // before P050
        for player in players[100..<(100 + Self.bulk)] { try player.setValue(player.value(forKey: "name") as! String + "!", forKey: "name") }
        try context.save()

        XCTAssertEqual(try replay(recorder.batches, from: before, context: context), controller.snapshot)
        let batch = ChangeBatch(sectionChanges: recorder.batches.flatMap(\.sectionChanges), objectChanges: changes(recorder))
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
        let (controller, recorder) = try watch(context, request, sectionNameKeyPath: "zone")
        let before = controller.snapshot
        // Every Oceania player moves to Africa (a new first section, Oceania goes); Europe's
        // players change in place.
        for (i, player) in players.enumerated() where i % 3 == 2 { try player.setValue("Africa", forKey: "zone") }
        for (i, player) in players.enumerated() where i % 3 == 1 { try player.setValue(i * 10 + 1, forKey: "score") }
        try context.save()

        XCTAssertEqual(try replay(recorder.batches, from: before, context: context), controller.snapshot)
        let batch = ChangeBatch(sectionChanges: recorder.batches.flatMap(\.sectionChanges), objectChanges: changes(recorder))
        XCTAssertEqual(controller.snapshot, try fresh(context, request, sectionNameKeyPath: "zone"))
        XCTAssertEqual(controller.snapshot.map(\.name), ["Africa", "Asia", "Europe"])
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
        let (controller, recorder) = try watch(context, request)
        let before = controller.snapshot
        // Three of the window leave for the end; many objects past the window change.
        for player in players[7..<10] { try player.setValue(5_000 + (player.value(forKey: "score") as! Int), forKey: "score") }
        try players[14].setValue(115, forKey: "score")   // moves before two unchanged ones, stays in the window
        for player in players[100..<(100 + Self.bulk)] { try player.setValue(player.value(forKey: "name") as! String + "!", forKey: "name") }
        try context.save()

        XCTAssertEqual(try replay(recorder.batches, from: before, context: context), controller.snapshot)
        let batch = ChangeBatch(sectionChanges: recorder.batches.flatMap(\.sectionChanges), objectChanges: changes(recorder))
        XCTAssertEqual(controller.snapshot, try fresh(context, request))
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
        let (controller, recorder) = try watch(context, request, sectionNameKeyPath: "zone")
        let before = controller.snapshot
        for (i, player) in players.enumerated() where i % 2 == 1 { try player.setValue(1_000 - i, forKey: "score") }
        let newcomer = try context.insert(entityName: "Player")
        try newcomer.setValue("New", forKey: "name")
        try newcomer.setValue("Europe", forKey: "zone")
        try context.save()

        XCTAssertEqual(controller.snapshot.map(\.name), ["Asia", "Europe", "Oceania"])
        XCTAssertEqual(controller.snapshot, try fresh(context, request, sectionNameKeyPath: "zone"))
        XCTAssertEqual(try replay(recorder.batches, from: before, context: context).map(\.name), ["Asia", "Europe", "Oceania"])
    }

    /// Sections from their own entity: a player moving past an unchanged one moves alone, a
    /// club whose rank changes moves as a section with its players, a renamed club is a
    /// section update.
    func testWithSectionsFromClubsOnlyWhatChangedMoves() throws {
        let (context, players) = try makeStore(players: 30)
        let clubs = try League.insertClubs(3, into: context)
        for (i, player) in players.enumerated() { try player.setValue(clubs[i % 3], forKey: "club") }
        try context.save()
        let clubRequest = FetchRequest<ManagedObject>(entityName: "Club", sortDescriptors: [FetchSortDescriptor(key: "rank"), FetchSortDescriptor(key: "name")])
        let controller = FetchedResultsController(fetchRequest: byScore, sectionFetchRequest: clubRequest,
                                                  sectionRelationshipKeyPath: "club", sectionNameKey: "name", managedObjectContext: context)
        let recorder = BatchRecorder<ManagedObject>()
        controller.delegate = recorder
        try controller.performFetch()
        func freshSections() throws -> [SectionSnapshot] {
            let fresh = FetchedResultsController(fetchRequest: byScore, sectionFetchRequest: clubRequest,
                                                 sectionRelationshipKeyPath: "club", sectionNameKey: "name", managedObjectContext: context)
            try fresh.performFetch()
            return fresh.snapshot
        }

        // Club 0 holds P000, P003, P006, ...: P009 goes before P006.
        var before = controller.snapshot
        try players[9].setValue(55, forKey: "score")
        try context.save()
        XCTAssertEqual(try replay(recorder.batches, from: before, context: context), controller.snapshot)
        XCTAssertEqual(controller.snapshot, try freshSections())
        XCTAssertEqual(changes(recorder).filter { $0.type == .move }.map(\.objectID), [players[9].objectID])
        XCTAssertFalse(changes(recorder).contains { $0.objectID == players[6].objectID }, "the unchanged neighbour is untouched")

        recorder.batches = []
        before = controller.snapshot
        try clubs[2].setValue(-1, forKey: "rank")
        try clubs[1].setValue("Club One", forKey: "name")
        try context.save()
        XCTAssertEqual(try replay(recorder.batches, from: before, context: context), controller.snapshot)
        XCTAssertEqual(controller.snapshot, try freshSections())
        XCTAssertEqual(controller.snapshot.map(\.name), ["Club 2", "Club 0", "Club One"])
        XCTAssertEqual(changes(recorder), [], "no player changed")
        let sectionChanges = recorder.batches.flatMap(\.sectionChanges)
        XCTAssertEqual(sectionChanges.filter { $0.type == .move }.count, 1)
        XCTAssertTrue(sectionChanges.contains { $0.type == .update && $0.name == "Club One" } || sectionChanges.contains { $0.type == .move && $0.name == "Club One" })
    }

    /// Random bulk edits of the players' own values: every batch is valid, ends in a fresh
    /// fetch, moves only objects that were edited and only when needed, and never touches
    /// an unedited object except to let it enter or leave a limited window.
    func testRandomBulkSavesMoveOnlyEditedObjects() throws {
        let seed = SeededGenerator.seed()
        var rng = SeededGenerator(seed: seed)
        let zones: [String?] = ["Africa", "Asia", "Europe", "Oceania", nil]
        let (context, initial) = try makeStore(players: 150) { _ in zones[Int.random(in: 0..<zones.count, using: &rng)] }
        var players = initial
        let byZone = FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score", ascending: false)])
        var limited = byScore
        limited.fetchLimit = 30
        limited.fetchOffset = 10
        let filtered = FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "active == YES"),
                                                   sortDescriptors: [FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "name")])
        let watched: [(String, FetchRequest<ManagedObject>, String?)] = [
            ("by score", byScore, nil), ("sections by zone", byZone, "zone"), ("limit and offset", limited, nil), ("active only", filtered, nil),
        ]
        let controllers = try watched.map { try watch(context, $0.1, sectionNameKeyPath: $0.2) }

        for step in 0..<25 {
            let previous = controllers.map { $0.0.snapshot }
            var edited = Set<ObjectID>()
            for _ in 0..<Int.random(in: Self.bulk...(2 * Self.bulk), using: &rng) {
                switch Int.random(in: 0..<10, using: &rng) {
                case 0:
                    let player = try context.insert(entityName: "Player")
                    try player.setValue("N\(step)-\(players.count)", forKey: "name")
                    try player.setValue(Int.random(in: 0...2_000, using: &rng), forKey: "score")
                    try player.setValue(zones.randomElement(using: &rng)!, forKey: "zone")
                    players.append(player)
                case 1 where players.count > 100:
                    let player = players.remove(at: Int.random(in: 0..<players.count, using: &rng))
                    edited.insert(player.objectID)
                    try context.delete(player)
                case 2, 3:
                    let player = players.randomElement(using: &rng)!
                    try player.setValue(Int.random(in: 0...2_000, using: &rng), forKey: "score")
                    edited.insert(player.objectID)
                case 4:
                    let player = players.randomElement(using: &rng)!
                    try player.setValue(zones.randomElement(using: &rng)!, forKey: "zone")
                    edited.insert(player.objectID)
                case 5:
                    let player = players.randomElement(using: &rng)!
                    try player.setValue(Bool.random(using: &rng), forKey: "active")
                    edited.insert(player.objectID)
                default:
                    let player = players.randomElement(using: &rng)!
                    try player.setValue("R\(Int.random(in: 0..<1_000, using: &rng))", forKey: "name")
                    edited.insert(player.objectID)
                }
            }
            try context.save()
            // Inserted objects were temporary when edited; after the save they are new to every batch.
            for (index, (name, request, keyPath)) in watched.enumerated() {
                let (controller, recorder) = controllers[index]
                let label = "seed \(seed) step \(step) [\(name)]"
                var state = previous[index]
                for batch in recorder.batches {
                    let before = state
                    do { state = try batch.applied(to: before) } catch { return XCTFail("\(label): invalid batch: \(error)") }
                    // An unedited object may only enter or leave a limited window (inserted
                    // objects are new to every batch).
                    for change in batch.objectChanges where !edited.contains(change.objectID) {
                        guard change.type == .insert || (change.type == .delete && request.fetchLimit > 0) else {
                            return XCTFail("\(label): \(change) names an object that was not edited")
                        }
                    }
                    assertEveryMoveIsNeeded(batch, from: before, label)
                }
                XCTAssertEqual(try replay([], from: state, context: context), controller.snapshot, "\(label): batches do not lead to the sections")
                XCTAssertEqual(controller.snapshot, try fresh(context, request, sectionNameKeyPath: keyPath), "\(label): differs from a fresh fetch")
                recorder.batches = []
            }
        }
    }
}
