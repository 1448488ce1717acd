import FetchedResults
import Foundation
import ObjectStore
import TestSupport
import XCTest

/// Invariant 2: after every random edit, the batch each controller delivers turns its
/// previous sections into exactly its new sections by the batch rules, and those equal a
/// fresh fetch.
final class ControllerPropertyTests: XCTestCase {

    private static let zones: [String?] = ["Africa", "Asia", "Europe", "Oceania", "South America", nil]
    private static let names = ["Ana", "bo", "Cy", "Dee", "Émile", "Emile", "fay", "Gus", "Hal", "Ivy"]

    func testEveryBatchIsValidAndEndsInAFreshFetch() throws {
        let seed = SeededGenerator.seed()
        var rng = SeededGenerator(seed: seed)
        let store = try PersistentStore(url: temporaryFolder(self).appendingPathComponent("league.sqlite"), model: League.model())
        let context = ObjectContext(store: store)
        let other = ObjectContext(store: store)   // a second context, saving on its own
        other.automaticallyMergesChangesFromStore = false
        // The two save over each other's fields on purpose: the last save wins (the default
        // policy would refuse such a save; ObjectStoreTests' ConflictTests cover that).
        context.mergePolicy = .editWins
        other.mergePolicy = .editWins

        var clubs = try League.insertClubs(4, into: context)
        var players: [ManagedObject] = []
        for _ in 0..<25 { players.append(try insertPlayer(context, clubs: clubs, &rng)) }
        try context.save()

        func watch(_ name: String, _ request: FetchRequest<ManagedObject>, sectionNameKeyPath: String?) throws -> Watched {
            try Watched(name) { FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: sectionNameKeyPath) }
        }
        let byZone = [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score", ascending: false), FetchSortDescriptor(key: "name")]
        var limited = FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "active == YES"), sortDescriptors: byZone)
        limited.fetchLimit = 6
        limited.fetchOffset = 2
        let clubRequest = FetchRequest<ManagedObject>(entityName: "Club", sortDescriptors: [FetchSortDescriptor(key: "rank"), FetchSortDescriptor(key: "name")])
        let itemsInClubs = FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "name")])
        let watched = [
            try watch("sections by zone, active only",
                      FetchRequest(entityName: "Player", predicate: try FetchPredicate(format: "active == YES AND score >= 1"), sortDescriptors: byZone),
                      sectionNameKeyPath: "zone"),
            try watch("zones descending", FetchRequest(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "zone", ascending: false), FetchSortDescriptor(key: "name")]),
                      sectionNameKeyPath: "zone"),
            try watch("one section, sorted across the club",
                      FetchRequest(entityName: "Player", predicate: try FetchPredicate(format: "club.rank >= 1"),
                                   sortDescriptors: [FetchSortDescriptor(key: "club.rank", ascending: false), FetchSortDescriptor(key: "name", options: [.caseInsensitive])]),
                      sectionNameKeyPath: nil),
            try watch("limit and offset", limited, sectionNameKeyPath: "zone"),
            try Watched("sections from clubs") {
                FetchedResultsController(fetchRequest: itemsInClubs, sectionFetchRequest: clubRequest,
                                         sectionRelationshipKeyPath: "club", sectionNameKey: "name", managedObjectContext: context)
            },
        ]

        for step in 0..<120 {
            var edits: [String] = []
            let fromOtherContext = Int.random(in: 0..<6, using: &rng) == 0
            if fromOtherContext {
                // Another context changes a saved player and a club, saves; this one merges.
                let player = try other.existingObject(with: players.filter { !$0.objectID.isTemporaryID }.randomElement(using: &rng)!.objectID)
                try player.setValue(Int.random(in: 0...5, using: &rng), forKey: "score")
                try player.setValue(Self.zones.randomElement(using: &rng)!, forKey: "zone")
                let club = try other.existingObject(with: clubs.filter { !$0.objectID.isTemporaryID }.randomElement(using: &rng)!.objectID)
                try club.setValue(Int.random(in: 0...4, using: &rng), forKey: "rank")
                try other.save()
                context.mergeChanges(fromContextDidSave: ObjectChanges(updated: [player.objectID: ["score", "zone"], club.objectID: ["rank"]]))
                edits.append("other context: \(player.objectID) and \(club.objectID)")
            } else {
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    switch Int.random(in: 0..<12, using: &rng) {
                    case 0, 1:
                        players.append(try insertPlayer(context, clubs: clubs, &rng))
                        edits.append("insert")
                    case 2 where players.count > 5:
                        let player = players.remove(at: Int.random(in: 0..<players.count, using: &rng))
                        try context.delete(player)
                        edits.append("delete \(player.objectID)")
                    case 3:
                        let player = players.randomElement(using: &rng)!
                        try player.setValue(Self.zones.randomElement(using: &rng)!, forKey: "zone")
                        edits.append("zone of \(player.objectID)")
                    case 4, 5:
                        let player = players.randomElement(using: &rng)!
                        try player.setValue(Int.random(in: 0...5, using: &rng), forKey: "score")
                        edits.append("score of \(player.objectID)")
                    case 6:
                        let player = players.randomElement(using: &rng)!
                        try player.setValue(Bool.random(using: &rng), forKey: "active")
                        edits.append("active of \(player.objectID)")
                    case 7:
                        let player = players.randomElement(using: &rng)!
                        try player.setValue(Bool.random(using: &rng) ? clubs.randomElement(using: &rng)! : nil, forKey: "club")
                        edits.append("club of \(player.objectID)")
                    case 8:
                        let club = clubs.randomElement(using: &rng)!
                        try club.setValue(Int.random(in: 0...4, using: &rng), forKey: "rank")
                        edits.append("rank of \(club.objectID)")
                    case 9:
                        let club = clubs.randomElement(using: &rng)!
                        try club.setValue("Club \(Int.random(in: 0...9, using: &rng))", forKey: "name")
                        edits.append("name of \(club.objectID)")
                    case 10 where clubs.count < 6:
                        let club = try context.insert(entityName: "Club")
                        try club.setValue("New club \(step)", forKey: "name")
                        clubs.append(club)
                        edits.append("club inserted")
                    default:
                        let player = players.randomElement(using: &rng)!
                        try player.setValue(Self.names.randomElement(using: &rng)!, forKey: "name")
                        edits.append("name of \(player.objectID)")
                    }
                }
                if Bool.random(using: &rng) { try context.save() } else { context.processPendingChanges() }
            }
            for item in watched {
                let current = item.controller.snapshot
                var state = item.previous
                for batch in item.recorder.batches {
                    do {
                        state = try batch.applied(to: state)
                    } catch {
                        return XCTFail("seed \(seed) step \(step) [\(item.name)] after \(edits): invalid batch: \(error)\n\(batch)\nold: \(item.previous)")
                    }
                    assertEveryMoveIsNeeded(batch, from: item.previous, "seed \(seed) step \(step) [\(item.name)]")
                }
                // Objects saved for the first time are renamed by the batches themselves.
                XCTAssertEqual(state, current, "seed \(seed) step \(step) [\(item.name)] after \(edits): batches do not lead to the sections")
                let fresh = try item.fresh()
                XCTAssertEqual(current, fresh, "seed \(seed) step \(step) [\(item.name)] after \(edits): differs from a fresh fetch")
                if state != current || current != fresh { return }
                item.previous = current
                item.recorder.batches = []
            }
        }
    }

    private func insertPlayer(_ context: ObjectContext, clubs: [ManagedObject], _ rng: inout SeededGenerator) throws -> ManagedObject {
        let player = try context.insert(entityName: "Player")
        try player.setValue(Self.names.randomElement(using: &rng)!, forKey: "name")
        try player.setValue(Self.zones.randomElement(using: &rng)!, forKey: "zone")
        try player.setValue(Int.random(in: 0...5, using: &rng), forKey: "score")
        try player.setValue(Int.random(in: 0..<4, using: &rng) > 0, forKey: "active")
        try player.setValue(Bool.random(using: &rng) ? clubs.randomElement(using: &rng)! : nil, forKey: "club")
        return player
    }
}
