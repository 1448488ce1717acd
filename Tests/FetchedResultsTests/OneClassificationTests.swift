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
        var limited = FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "score < 18"), sortDescriptors: sorts)
        limited.fetchLimit = 1_000_000
        let refetching = FetchedResultsController(fetchRequest: limited, managedObjectContext: context, sectionNameKeyPath: "zone")
        // A third places every change of more than two objects together (batched searches).
        let together = FetchedResultsController(
            fetchRequest: FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "score < 18"), sortDescriptors: sorts),
            managedObjectContext: context, sectionNameKeyPath: "zone")
        together.placementOverride = (oneByOne: 2, together: 1_000)
        let placed = BatchRecorder<ManagedObject>(), refetched = BatchRecorder<ManagedObject>(), placedTogether = BatchRecorder<ManagedObject>()
        placing.delegate = placed
        refetching.delegate = refetched
        together.delegate = placedTogether
        try placing.performFetch()
        try refetching.performFetch()
        try together.performFetch()
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
}
