import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// `indexPath(for:)` answers from an index of places, not a scan: after any change it must
/// still give every object's place, and nil for objects that left the results.
final class IndexPathLookupTests: XCTestCase {
    func testEveryObjectIsFoundWhereTheListHasItAfterRandomSaves() throws {
        let seed = SeededGenerator.seed()
        print("IndexPathLookupTests seed: \(seed) (SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        let context = try League.context(self)
        let zones = ["A", "B", "C", "D"]
        var players: [ManagedObject] = []
        for i in 0..<60 {
            players.append(try League.insertPlayer(context, name: "P\(i)", zone: zones[i % 4], score: Int.random(in: 0..<30, using: &random)))
        }
        try context.save()
        let controller = FetchedResultsController(
            fetchRequest: FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "score < 25"),
                                                      sortDescriptors: [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "name")]),
            managedObjectContext: context, sectionNameKeyPath: "zone")
        let recorder = BatchRecorder<ManagedObject>()   // a controller follows changes for its delegate
        controller.delegate = recorder
        try controller.performFetch()
        var gone: [ObjectID] = []
        var moves = 0
        for round in 0..<120 {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                switch Int.random(in: 0..<8, using: &random) {
                case 0 where players.count > 10:
                    let player = players.remove(at: Int.random(in: 0..<players.count, using: &random))
                    gone.append(player.objectID)
                    try context.delete(player)
                case 1:
                    players.append(try League.insertPlayer(context, name: "N\(round)", zone: zones.randomElement(using: &random)!,
                                                           score: Int.random(in: 0..<30, using: &random)))
                case 2:
                    try players.randomElement(using: &random)!.setValue(zones.randomElement(using: &random)!, forKey: "zone")
                default:
                    try players.randomElement(using: &random)!.setValue(Int.random(in: 0..<30, using: &random), forKey: "score")
                }
            }
            if Bool.random(using: &random) { try context.save() } else { context.processPendingChanges() }
            // Ask in a random order, so that some hints are used long after they were made.
            var asked = controller.snapshot.enumerated().flatMap { s, section in
                section.objectIDs.enumerated().map { (id: $1, path: IndexPath(item: $0, section: s)) }
            }
            asked.shuffle(using: &random)
            for (id, path) in asked.prefix(20) {
                XCTAssertEqual(controller.indexPath(forObjectID: id), path, "round \(round), seed \(seed): \(id)")
            }
            moves += recorder.batches.flatMap(\.objectChanges).filter { $0.type == .move }.count
            recorder.batches.removeAll()
            let shown = Set(controller.snapshot.flatMap(\.objectIDs))
            for id in gone.suffix(5) + players.map(\.objectID) where !shown.contains(id) {
                XCTAssertNil(controller.indexPath(forObjectID: id), "round \(round), seed \(seed): \(id) is not in the list")
            }
        }
        XCTAssertGreaterThan(moves, 50, "the rounds moved objects")
    }
}
