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

    private static let zones: [String?] = ["Africa", "Asia", "Europe", "Oceania", nil]
    private static let names = ["Ana", "bo", "Cy", "Dee", "Émile", "Emile", "fay", "Gus", "Hal", "Ivy"]

    func testRandomEditsOfPlayersAndClubs() throws {
        let base = SeededGenerator.seed()
        let rounds = Int(ProcessInfo.processInfo.environment["ROUNDS"] ?? "") ?? 2
        for round in 0..<UInt64(rounds) {
            if try !run(seed: base &+ round) { return }
        }
    }

    /// One random run; false after a failure.
    private func run(seed: UInt64) throws -> Bool {
        var rng = SeededGenerator(seed: seed)
        let store = try PersistentStore(url: temporaryFolder(self).appendingPathComponent("league.sqlite"), model: League.model())
        let context = ObjectContext(store: store)
        let other = ObjectContext(store: store)
        other.automaticallyMergesChangesFromStore = false
        context.mergePolicy = .editWins
        other.mergePolicy = .editWins
        var otherSaves: [ObjectChanges] = []
        let otherObservation = other.addObserver { event in if case .didSave(let changes) = event { otherSaves.append(changes) } }
        defer { otherObservation.cancel() }

        var clubs = try League.insertClubs(4, into: context)
        var players: [ManagedObject] = []
        for _ in 0..<60 { players.append(try insertPlayer(context, clubs: clubs, &rng)) }
        try context.save()

        func keyPathController(_ request: FetchRequest<ManagedObject>, _ keyPath: String?) -> () -> FetchedResultsController<ManagedObject> {
            { FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: keyPath) }
        }
        func clubSections(_ request: FetchRequest<ManagedObject>, _ clubRequest: FetchRequest<ManagedObject>) -> () -> FetchedResultsController<ManagedObject> {
            { FetchedResultsController(fetchRequest: request, sectionFetchRequest: clubRequest, sectionRelationshipKeyPath: "club",
                                       sectionNameKey: "name", managedObjectContext: context) }
        }
        let byScore = [FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "name")]
        let clubRequest = FetchRequest<ManagedObject>(entityName: "Club", sortDescriptors: [FetchSortDescriptor(key: "rank"), FetchSortDescriptor(key: "name")])
        let rankedClubs = FetchRequest<ManagedObject>(entityName: "Club", predicate: try FetchPredicate(format: "rank >= 1"),
                                                      sortDescriptors: [FetchSortDescriptor(key: "name", ascending: false)])
        var limitedItems = FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "active == YES"), sortDescriptors: byScore)
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
            try Watched("sections from clubs", clubSections(FetchRequest(entityName: "Player", sortDescriptors: byScore), clubRequest)),
            try Watched("sections from clubs, limit+offset", clubSections(limitedItems, clubRequest)),
            try Watched("sections from ranked clubs", clubSections(FetchRequest(entityName: "Player", sortDescriptors: byScore), rankedClubs)),
            try Watched("club.rank sections, limit+offset", keyPathController(rankSectionsLimited, "club.rank")),
            try Watched("club.rank sections", keyPathController(FetchRequest(entityName: "Player", sortDescriptors: byRank), "club.rank")),
            try Watched("club.name sections", keyPathController(clubNameSections, "club.name")),
            try Watched("across club.rank, limit", keyPathController(acrossRank, nil)),
            try Watched("across club.rank", keyPathController(acrossRankUnlimited, nil)),
            try Watched("zone sections, limit+offset", keyPathController(zonesLimited, "zone")),
            try Watched("zone sections", keyPathController(zones, "zone")),
            try Watched("by score", keyPathController(FetchRequest(entityName: "Player", sortDescriptors: byScore), nil)),
        ]

        /// Each player's club, by the objects themselves (IDs change when saved).
        func clubsOfPlayers() -> [ObjectIdentifier: ObjectIdentifier] {
            var result: [ObjectIdentifier: ObjectIdentifier] = [:]
            for object in context.registeredObjects where object.entity.name == "Player" && !object.isDeleted {
                if let club = (try? object.value(forKey: "club")) as? ManagedObject { result[ObjectIdentifier(object)] = ObjectIdentifier(club) }
            }
            return result
        }

        for step in 0..<60 {
            var edits: [String] = []
            // The objects edited: players, and clubs (whose players before and after count as edited).
            var touched: [ManagedObject] = []
            let clubsBefore = clubsOfPlayers()
            let bulk = Int.random(in: 0..<4, using: &rng) == 0
            if Int.random(in: 0..<8, using: &rng) == 0 {
                // Another context edits saved players and a club (sometimes deletes one), this one merges its save.
                let savedPlayers = players.filter { !$0.objectID.isTemporaryID }
                for _ in 0..<(bulk ? 90 : 2) {
                    guard let mine = savedPlayers.randomElement(using: &rng) else { break }
                    let player = try other.existingObject(with: mine.objectID)
                    touched.append(mine)
                    try player.setValue(Int.random(in: 0...9, using: &rng), forKey: "score")
                    if Bool.random(using: &rng) { try player.setValue(Self.zones.randomElement(using: &rng)!, forKey: "zone") }
                }
                if let mine = clubs.filter({ !$0.objectID.isTemporaryID }).randomElement(using: &rng) {
                    let club = try other.existingObject(with: mine.objectID)
                    touched.append(mine)
                    if Int.random(in: 0..<4, using: &rng) == 0 && clubs.count > 2 {
                        try other.delete(club)
                        edits.append("other context deletes \(club.objectID)")
                    } else {
                        try club.setValue(Int.random(in: 0...4, using: &rng), forKey: "rank")
                        edits.append("other context: rank of \(club.objectID)")
                    }
                }
                try other.save()
                for changes in otherSaves { context.mergeChanges(fromContextDidSave: changes) }
                otherSaves = []
                clubs.removeAll { $0.managedObjectContext == nil || $0.isDeleted }
                players.removeAll { $0.managedObjectContext == nil || $0.isDeleted }
            } else {
                for _ in 0..<(bulk ? Int.random(in: 80...160, using: &rng) : Int.random(in: 1...4, using: &rng)) {
                    switch Int.random(in: 0..<16, using: &rng) {
                    case 0, 1:
                        players.append(try insertPlayer(context, clubs: clubs, &rng))
                        edits.append("insert")
                    case 2 where players.count > 20:
                        let player = players.remove(at: Int.random(in: 0..<players.count, using: &rng))
                        touched.append(player)
                        edits.append("delete \(player.objectID)")
                        try context.delete(player)
                    case 3:
                        let player = players.randomElement(using: &rng)!
                        touched.append(player)
                        try player.setValue(Self.zones.randomElement(using: &rng)!, forKey: "zone")
                        edits.append("zone of \(player.objectID)")
                    case 4, 5:
                        let player = players.randomElement(using: &rng)!
                        touched.append(player)
                        try player.setValue(Int.random(in: 0...9, using: &rng), forKey: "score")
                        edits.append("score of \(player.objectID)")
                    case 6:
                        let player = players.randomElement(using: &rng)!
                        touched.append(player)
                        try player.setValue(Bool.random(using: &rng), forKey: "active")
                        edits.append("active of \(player.objectID)")
                    case 7:
                        let player = players.randomElement(using: &rng)!
                        touched.append(player)
                        let club = Int.random(in: 0..<5, using: &rng) == 0 ? nil : clubs.randomElement(using: &rng)
                        try player.setValue(club, forKey: "club")
                        edits.append("club of \(player.objectID) = \(club?.objectID.description ?? "nil")")
                    case 8:
                        let player = players.randomElement(using: &rng)!
                        touched.append(player)
                        if let club = clubs.randomElement(using: &rng) {
                            touched.append(club)
                            try club.addObject(player, toRelationship: "players")
                            edits.append("\(club.objectID) adds \(player.objectID)")
                        }
                    case 9, 10:
                        if let club = clubs.randomElement(using: &rng) {
                            touched.append(club)
                            try club.setValue(Int.random(in: 0...4, using: &rng), forKey: "rank")
                            edits.append("rank of \(club.objectID)")
                        }
                    case 11:
                        if let club = clubs.randomElement(using: &rng) {
                            touched.append(club)
                            try club.setValue("Club \(Int.random(in: 0...6, using: &rng))", forKey: "name")
                            edits.append("name of \(club.objectID)")
                        }
                    case 12 where clubs.count < 7:
                        let club = try context.insert(entityName: "Club")
                        try club.setValue("Club \(Int.random(in: 0...6, using: &rng))", forKey: "name")
                        try club.setValue(Int.random(in: 0...4, using: &rng), forKey: "rank")
                        clubs.append(club)
                        edits.append("club inserted")
                    case 13 where clubs.count > 2:
                        let club = clubs.remove(at: Int.random(in: 0..<clubs.count, using: &rng))
                        touched.append(club)
                        edits.append("delete \(club.objectID)")
                        try context.delete(club)
                    default:
                        let player = players.randomElement(using: &rng)!
                        touched.append(player)
                        try player.setValue(Self.names.randomElement(using: &rng)!, forKey: "name")
                        edits.append("name of \(player.objectID)")
                    }
                }
                if Bool.random(using: &rng) { try context.save() } else { context.processPendingChanges() }
            }
            let clubsAfter = clubsOfPlayers()
            let touchedObjects = Set(touched.map(ObjectIdentifier.init))
            var edited = Set<ObjectID>()
            for object in context.registeredObjects.union(touched) where object.entity.name == "Player" {
                let me = ObjectIdentifier(object)
                guard touchedObjects.contains(me) || clubsBefore[me].map(touchedObjects.contains) == true
                        || clubsAfter[me].map(touchedObjects.contains) == true else { continue }
                edited.insert(object.objectID)
                if let temporary = object.temporaryObjectID { edited.insert(temporary) }
            }
            let summary = bulk ? "\(edits.count) edits (bulk)" : "\(edits)"
            for item in watched {
                let label = "seed \(seed) step \(step) [\(item.name)] after \(summary)"
                let current = item.controller.snapshot
                var state = item.previous
                for batch in item.recorder.batches {
                    let old = state
                    do {
                        state = try batch.applied(to: old)
                    } catch {
                        XCTFail("\(label): invalid batch: \(error)\n\(batch)\nold: \(old)")
                        return false
                    }
                    assertEveryMoveIsNeeded(batch, from: old, label)
                    // README: only objects that changed are reported as moved.
                    for change in batch.objectChanges where change.type == .move {
                        if !edited.contains(change.objectID) {
                            XCTFail("\(label): \(change) names an object that was not edited\nedits: \(edits)\nbatch: \(batch)\nold: \(old)\nnew: \(current)")
                        }
                    }
                }
                // Objects saved for the first time are renamed by the batches themselves.
                XCTAssertEqual(state, current, "\(label): batches do not lead to the sections")
                let fresh = try item.fresh()
                XCTAssertEqual(current, fresh, "\(label): differs from a fresh fetch")
                if state != current || current != fresh { return false }
                item.previous = current
                item.recorder.batches = []
            }
        }
        return true
    }

    /// Sections from clubs that match a predicate: a club that starts to match brings its
    /// (unchanged) players in with it. In the same save a player passes an unchanged
    /// neighbour: only the edited player may move.
    func testASectionEnteringWithItsObjectsDoesNotMoveAnUnchangedNeighbour() throws {
        let store = try PersistentStore(url: temporaryFolder(self).appendingPathComponent("league.sqlite"), model: League.model())
        let context = ObjectContext(store: store)
        let clubs = try League.insertClubs(2, into: context)   // ranks 0 and 1
        var players: [ManagedObject] = []
        for (i, club) in [clubs[1], clubs[1], clubs[1], clubs[0]].enumerated() {
            let player = try context.insert(entityName: "Player")
            try player.setValue("P\(i)", forKey: "name")
            try player.setValue((i + 1) * 10, forKey: "score")
            try player.setValue(club, forKey: "club")
            players.append(player)
        }
        try context.save()
        let ranked = FetchRequest<ManagedObject>(entityName: "Club", predicate: try FetchPredicate(format: "rank >= 1"), sortDescriptors: [FetchSortDescriptor(key: "rank")])
        let items = FetchRequest<ManagedObject>(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "name")])
        let make = {
            FetchedResultsController(fetchRequest: items, sectionFetchRequest: ranked, sectionRelationshipKeyPath: "club",
                                     sectionNameKey: "name", managedObjectContext: context)
        }
        let controller = make()
        let recorder = BatchRecorder<ManagedObject>()
        controller.delegate = recorder
        try controller.performFetch()
        let before = controller.snapshot

        try players[2].setValue(15, forKey: "score")   // passes P1, which does not change
        try clubs[0].setValue(5, forKey: "rank")        // Club 0 and P3 come in
        try context.save()

        let fresh = make()
        try fresh.performFetch()
        XCTAssertEqual(controller.snapshot, fresh.snapshot)
        XCTAssertEqual(controller.snapshot.map(\.name), ["Club 1", "Club 0"])
        let batch = try XCTUnwrap(recorder.batches.last)
        XCTAssertEqual(try batch.applied(to: before), controller.snapshot)
        XCTAssertEqual(batch.objectChanges.filter { $0.type == .move }.map(\.objectID), [players[2].objectID],
                       "only the edited player moves: \(batch.objectChanges)")
    }

    private func insertPlayer(_ context: ObjectContext, clubs: [ManagedObject], _ rng: inout SeededGenerator) throws -> ManagedObject {
        let player = try context.insert(entityName: "Player")
        try player.setValue(Self.names.randomElement(using: &rng)!, forKey: "name")
        try player.setValue(Self.zones.randomElement(using: &rng)!, forKey: "zone")
        try player.setValue(Int.random(in: 0...9, using: &rng), forKey: "score")
        try player.setValue(Int.random(in: 0..<4, using: &rng) > 0, forKey: "active")
        try player.setValue(Int.random(in: 0..<5, using: &rng) > 0 ? clubs.randomElement(using: &rng) : nil, forKey: "club")
        return player
    }
}
