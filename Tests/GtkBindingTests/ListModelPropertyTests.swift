import CGtk
import FetchedResults
import Foundation
@testable import GtkBinding
import ObjectStore
import XCTest

/// Random edits and saves on a real SQLite store: every items-changed emission fits the list
/// it changes, and after every batch the GListModel shows exactly the controller's flattened
/// sections. Needs GObject and GIO only (no display).
final class ListModelPropertyTests: XCTestCase {
    private final class Watched {
        let name: String
        let rows: FetchedResultsListModel<ManagedObject>
        let recorder: ItemsChangedRecorder
        var batches = 0

        init(_ name: String, _ controller: FetchedResultsController<ManagedObject>) throws {
            self.name = name
            let rows = try FetchedResultsListModel(controller: controller)
            self.rows = rows
            recorder = ItemsChangedRecorder(rows.listModel) { [unowned rows] in rows.identity(ofItem: $0) }
        }

        var expected: [ListItemIdentity] { flattened(rows.controller.snapshot, headers: rows.showsSectionHeaders) }
    }

    func testEveryEmissionKeepsTheListModelInStepWithTheController() throws {
        let seed = SeededGenerator.seed()
        var rng = SeededGenerator(seed: seed)
        let context = try League.context(self)
        var clubs: [ManagedObject] = []
        for i in 0..<3 {
            let club = try context.insert(entityName: "Club")
            try club.setValue("Club \(i)", forKey: "name")
            try club.setValue(i, forKey: "rank")
            clubs.append(club)
        }
        var players: [ManagedObject] = []
        for _ in 0..<20 { players.append(try insertPlayer(context, clubs: clubs, &rng)) }
        try context.save()

        let byScore = [FetchSortDescriptor(key: "score", ascending: false), FetchSortDescriptor(key: "name")]
        var limited = FetchRequest<ManagedObject>(entityName: "Player", predicate: try FetchPredicate(format: "score >= 1"),
                                                  sortDescriptors: [FetchSortDescriptor(key: "zone")] + byScore)
        limited.fetchLimit = 8
        limited.fetchOffset = 2
        let watched = [
            try Watched("sections by zone", League.byZone(context)),
            try Watched("no sections", FetchedResultsController(
                fetchRequest: FetchRequest(entityName: "Player", predicate: try FetchPredicate(format: "score >= 2"), sortDescriptors: byScore),
                managedObjectContext: context)),
            try Watched("limit and offset", FetchedResultsController(fetchRequest: limited, managedObjectContext: context, sectionNameKeyPath: "zone")),
            try Watched("sections from clubs", FetchedResultsController(
                fetchRequest: FetchRequest(entityName: "Player", sortDescriptors: byScore),
                sectionFetchRequest: FetchRequest(entityName: "Club", sortDescriptors: [FetchSortDescriptor(key: "rank"), FetchSortDescriptor(key: "name")]),
                sectionRelationshipKeyPath: "club", sectionNameKey: "name", managedObjectContext: context)),
        ]
        var step = 0
        var edits: [String] = []
        for item in watched {
            XCTAssertEqual(item.recorder.replica, item.expected, "[\(item.name)] initial list")
            item.rows.didChange = { [unowned item] batch in
                item.batches += 1
                XCTAssertEqual(item.recorder.replica, item.expected, "seed \(seed) step \(step) [\(item.name)] after \(edits): replayed emissions")
                // Updated objects and renamed sections were announced, so GTK binds them again.
                var replaced = batch.objectChanges.filter { $0.type == .update }.map { item.rows.position(for: $0.newIndexPath!) }
                replaced += batch.sectionChanges.filter { $0.type == .update }.compactMap { item.rows.position(forSectionHeader: $0.newIndex!) }
                for position in replaced {
                    XCTAssertEqual(item.recorder.readIn[position], item.recorder.generation,
                                   "seed \(seed) step \(step) [\(item.name)]: the update at \(position) was not announced")
                }
                item.recorder.generation += 1
            }
        }

        for _ in 0..<150 {
            step += 1
            edits = []
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                switch Int.random(in: 0..<11, using: &rng) {
                case 0, 1:
                    players.append(try insertPlayer(context, clubs: clubs, &rng))
                    edits.append("insert")
                case 2 where players.count > 5:
                    let player = players.remove(at: Int.random(in: 0..<players.count, using: &rng))
                    try context.delete(player)
                    edits.append("delete \(player.objectID)")
                case 3:
                    let player = players.randomElement(using: &rng)!
                    try player.setValue(League.zones.randomElement(using: &rng)!, forKey: "zone")
                    edits.append("zone of \(player.objectID)")
                case 4, 5:
                    let player = players.randomElement(using: &rng)!
                    try player.setValue(Int.random(in: 0...5, using: &rng), forKey: "score")
                    edits.append("score of \(player.objectID)")
                case 6:
                    let player = players.randomElement(using: &rng)!
                    try player.setValue("note \(step)", forKey: "note")
                    edits.append("note of \(player.objectID)")
                case 7:
                    let player = players.randomElement(using: &rng)!
                    try player.setValue(Bool.random(using: &rng) ? clubs.randomElement(using: &rng)! : nil, forKey: "club")
                    edits.append("club of \(player.objectID)")
                case 8:
                    let club = clubs.randomElement(using: &rng)!
                    if Bool.random(using: &rng) {
                        try club.setValue(Int.random(in: 0...4, using: &rng), forKey: "rank")
                    } else {
                        try club.setValue("Club \(Int.random(in: 0...9, using: &rng))", forKey: "name")
                    }
                    edits.append("club \(club.objectID)")
                case 9:
                    // A new request (a search, another order): one batch moving many rows.
                    let controller = watched[Int.random(in: 0...1, using: &rng)].rows.controller
                    var request = controller.fetchRequest
                    request.predicate = try FetchPredicate(format: "score >= %@", Int.random(in: 0...3, using: &rng))
                    request.sortDescriptors[request.sortDescriptors.count - 2].ascending.toggle()
                    try controller.setFetchRequest(request)
                    edits.append("new request for \(request)")
                default:
                    let club = try context.insert(entityName: "Club")
                    try club.setValue("New club \(step)", forKey: "name")
                    clubs.append(club)
                    edits.append("club inserted")
                }
            }
            if Bool.random(using: &rng) { try context.save() } else { context.processPendingChanges() }

            for item in watched {
                // Saves rename objects without a batch: the list follows those too.
                XCTAssertEqual(item.recorder.replica, item.expected, "seed \(seed) step \(step) [\(item.name)] after \(edits)")
                assertPositionsAgree(item.rows, "seed \(seed) step \(step) [\(item.name)]")
                if item.recorder.replica != item.expected { return }
            }
        }
        for item in watched {
            XCTAssertGreaterThan(item.batches, 20, "[\(item.name)] saw too few batches to mean anything")
        }
    }

    /// `item(at:)`, `position(for:)`, `indexPath(at:)` and `position(forSectionHeader:)` agree
    /// with each other and with the controller.
    private func assertPositionsAgree(_ rows: FetchedResultsListModel<ManagedObject>, _ message: String) {
        let sections = rows.controller.snapshot
        XCTAssertEqual(rows.count, Int(g_list_model_get_n_items(rows.listModel)), message)
        for position in 0..<rows.count {
            switch rows.item(at: position) {
            case .header(let section):
                XCTAssertEqual(rows.position(forSectionHeader: section), position, message)
                XCTAssertNil(rows.indexPath(at: position), message)
            case .object(let id, let indexPath):
                XCTAssertEqual(sections[indexPath.section].objectIDs[indexPath.item], id, message)
                XCTAssertEqual(rows.position(for: indexPath), position, message)
                XCTAssertEqual(rows.indexPath(at: position), indexPath, message)
            }
        }
    }

    private func insertPlayer(_ context: ObjectContext, clubs: [ManagedObject], _ rng: inout SeededGenerator) throws -> ManagedObject {
        try League.insertPlayer(context, name: League.names.randomElement(using: &rng)!, zone: League.zones.randomElement(using: &rng)!,
                                score: Int.random(in: 0...5, using: &rng),
                                club: Bool.random(using: &rng) ? clubs.randomElement(using: &rng)! : nil)
    }
}
