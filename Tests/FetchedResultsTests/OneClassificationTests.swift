import FetchedResults
import Foundation
import ObjectStore
import TestSupport
import XCTest

/// Every path that makes a batch names a change the same way. The same saves are watched by
/// a controller that places small changes in memory and by one whose (never reached) fetch
/// limit makes it fetch again after every save and classify the known changes; both must
/// deliver the same batches, to the change and its order, and each must apply.
final class OneClassificationTests: XCTestCase {

    func testPlacementAndRefetchNameEveryChangeTheSame() throws {
        let seed = SeededGenerator.seed()
        print("OneClassificationTests seed: \(seed) (SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        let store = try PersistentStore(url: temporaryFolder(self).appendingPathComponent("league.sqlite"), model: League.model())
        let context = ObjectContext(store: store)
        let zones = ["A", "B", "C", "D", "E"]
        var players: [ManagedObject] = []
        for i in 0..<12 {
            let player = try context.insert(entityName: "Player")
            try player.setValue("P\(i)", forKey: "name")
            try player.setValue(Int.random(in: 0..<20, using: &random), forKey: "score")
            try player.setValue(zones[i % 3], forKey: "zone")
            players.append(player)
        }
        try context.save()

        let sorts = [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "name")]
        let placing = FetchedResultsController(
            fetchRequest: FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "score < 18"), sortDescriptors: sorts),
            managedObjectContext: context, sectionNameKeyPath: "zone")
        let placed = BatchRecorder<ManagedObject>()
        placing.delegate = placed
        try placing.performFetch()
        // A third places every change of more than two objects together (batched searches).
        let (refetching, refetched, together, placedTogether) = try Self.refetchingAndPlacingTogether(
            FetchRequest(entityName: "Player", predicate: try FetchPredicate(format: "score < 18"), sortDescriptors: sorts), in: context)
        var moves = 0, sectionChanges = 0

        for round in 0..<150 {
            let before = placing.snapshot
            placed.batches.removeAll()
            refetched.batches.removeAll()
            placedTogether.batches.removeAll()
            if round % 30 == 29 {
                // A section empties: every player of one zone goes to another.
                let zone = zones.randomElement(using: &random)!, other = zones.randomElement(using: &random)!
                for player in players where (try player.value(forKey: "zone") as? String) == zone { try player.setValue(other, forKey: "zone") }
            }
            for _ in 0..<Int.random(in: 1...(round % 5 == 0 ? 12 : 4), using: &random) {
                switch Int.random(in: 0..<10, using: &random) {
                case 0 where players.count > 5:
                    try context.delete(players.remove(at: Int.random(in: 0..<players.count, using: &random)))
                case 1:
                    let player = try context.insert(entityName: "Player")
                    try player.setValue("N\(round)-\(players.count)", forKey: "name")
                    try player.setValue(Int.random(in: 0..<20, using: &random), forKey: "score")
                    try player.setValue(zones.randomElement(using: &random)!, forKey: "zone")
                    players.append(player)
                case 2, 3:
                    try players.randomElement(using: &random)!.setValue(zones.randomElement(using: &random)!, forKey: "zone")
                default:
                    try players.randomElement(using: &random)!.setValue(Int.random(in: 0..<20, using: &random), forKey: "score")
                }
            }
            try context.save()
            XCTAssertEqual(placed.batches, refetched.batches, "round \(round), seed \(seed): the two paths name the change differently")
            XCTAssertEqual(placedTogether.batches, refetched.batches, "round \(round), seed \(seed): placing together names the change differently")
            XCTAssertEqual(together.snapshot, refetching.snapshot, "round \(round), seed \(seed)")
            var state = before
            for batch in placed.batches { state = try batch.applied(to: state) }
            XCTAssertEqual(state, placing.snapshot, "round \(round), seed \(seed)")
            XCTAssertEqual(refetching.snapshot, placing.snapshot, "round \(round), seed \(seed)")
            moves += placed.batches.flatMap(\.objectChanges).filter { $0.type == .move }.count
            sectionChanges += placed.batches.flatMap(\.sectionChanges).count
        }
        // The rounds reached what they are about.
        XCTAssertGreaterThan(moves, 30)
        XCTAssertGreaterThan(sectionChanges, 3)
    }

    /// Another context's saves merged into the controllers' context, as an import's chunks
    /// arrive: new players (objects the context never held, read in one query), updates and
    /// deletes of saved ones the context may not hold, and, beside them, unsaved edits of the
    /// context itself. The controller that places many changes together must name each
    /// merged change as the refetching one does; names sort without case, so that the
    /// searches compare folded strings.
    func testMergedSavesPlacedTogetherNameEveryChangeAsARefetch() throws {
        let seed = SeededGenerator.seed()
        print("OneClassificationTests merged seed: \(seed) (SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        let store = try PersistentStore(url: temporaryFolder(self).appendingPathComponent("league.sqlite"), model: League.model())
        let context = ObjectContext(store: store)
        context.automaticallyMergesChangesFromStore = false
        context.mergePolicy = .editWins
        let other = ObjectContext(store: store)
        other.automaticallyMergesChangesFromStore = false
        other.mergePolicy = .editWins
        var saved: [ObjectChanges] = []
        let token = other.addObserver { event in
            if case .didSave(let changes) = event { saved.append(changes) }
        }
        let zones: [String?] = ["A", "b", "C", nil]
        var theirs: [ManagedObject] = []
        func insertTheirs(_ count: Int, round: Int) throws {
            for i in 0..<count {
                let player = try other.insert(entityName: "Player")
                try player.setValue((Bool.random(using: &random) ? "n" : "N") + "\(round)-\(i)", forKey: "name")
                try player.setValue(Int.random(in: 0..<20, using: &random), forKey: "score")
                if let zone = zones.randomElement(using: &random)! { try player.setValue(zone, forKey: "zone") }
                theirs.append(player)
            }
        }
        try insertTheirs(40, round: -1)
        try other.save()
        saved = []

        let sorts = [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score", ascending: false),
                     FetchSortDescriptor(key: "name", options: [.caseInsensitive])]
        let (refetching, refetched, together, placedTogether) = try Self.refetchingAndPlacingTogether(
            FetchRequest(entityName: "Player", predicate: try FetchPredicate(format: "score < 18"), sortDescriptors: sorts), in: context)
        var inserts = 0, moves = 0

        for round in 0..<60 {
            try insertTheirs(Int.random(in: 0...(round % 4 == 0 ? 30 : 6), using: &random), round: round)
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                guard let player = theirs.randomElement(using: &random) else { break }
                if Int.random(in: 0..<8, using: &random) == 0 && theirs.count > 10 {
                    try other.delete(player)
                    theirs.removeAll { $0 === player }
                } else {
                    try player.setValue(Int.random(in: 0..<20, using: &random), forKey: "score")
                }
            }
            if Bool.random(using: &random), let mine = theirs.filter({ !$0.objectID.isTemporaryID }).randomElement(using: &random) {
                // An unsaved edit here, of a player the other context may change too.
                try context.existingObject(with: mine.objectID).setValue(Int.random(in: 0..<20, using: &random), forKey: "score")
            }
            context.processPendingChanges()
            refetched.batches.removeAll()
            placedTogether.batches.removeAll()
            let edited = together.snapshot
            try other.save()
            for changes in saved { context.mergeChanges(fromContextDidSave: changes) }
            saved = []
            XCTAssertEqual(placedTogether.batches, refetched.batches, "round \(round), seed \(seed): placing merged changes together names them differently")
            XCTAssertEqual(together.snapshot, refetching.snapshot, "round \(round), seed \(seed)")
            var state = edited
            for batch in placedTogether.batches { state = try batch.applied(to: state) }
            XCTAssertEqual(state, together.snapshot, "round \(round), seed \(seed)")
            let changes = placedTogether.batches.flatMap(\.objectChanges)
            inserts += changes.filter { $0.type == .insert }.count
            moves += changes.filter { $0.type == .move }.count
        }
        withExtendedLifetime(token) {}
        // The rounds reached what they are about.
        XCTAssertGreaterThan(inserts, 100)
        XCTAssertGreaterThan(moves, 10)
    }

    /// Two controllers of `request` sectioned by zone, fetched, each with its recorder: one
    /// whose (never reached) fetch limit makes it fetch again after every change and classify
    /// the known changes, and one that places every change of more than two objects together.
    private static func refetchingAndPlacingTogether(_ request: FetchRequest<ManagedObject>, in context: ObjectContext) throws -> (
        FetchedResultsController<ManagedObject>, BatchRecorder<ManagedObject>, FetchedResultsController<ManagedObject>, BatchRecorder<ManagedObject>
    ) {
        var limited = request
        limited.fetchLimit = 1_000_000
        let refetching = FetchedResultsController(fetchRequest: limited, managedObjectContext: context, sectionNameKeyPath: "zone")
        let together = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "zone")
        together.policy.placedOneByOne = 2
        together.policy.placementLimit = 1_000
        let refetched = BatchRecorder<ManagedObject>(), placedTogether = BatchRecorder<ManagedObject>()
        refetching.delegate = refetched
        together.delegate = placedTogether
        try refetching.performFetch()
        try together.performFetch()
        return (refetching, refetched, together, placedTogether)
    }
}
