import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// The README's examples, run as written (in a temporary folder).
final class ReadmeExampleTests: XCTestCase {
    final class Team: ManagedObject {
        @Attribute var teamName: String
        @Attribute var qualifyingZone: String
        @Attribute var wins: Int
    }

    final class Delegate: FetchedResultsControllerDelegate {
        var batches: [ChangeBatch] = []
        func controller(_ controller: FetchedResultsController<Team>, didChangeContentWith batch: ChangeBatch) { batches.append(batch) }
    }

    func testTheReadmeExamplesWork() throws {
        let folder = try temporaryFolder(self)
        let modelURL = URL(fileURLWithPath: #filePath).appendingPathComponent("../../../data/worldcup/model.json").standardized
        let model = try Model(contentsOf: modelURL)
        XCTAssertNotNil(model.entity(named: "Team"))
        let sameModel = try Model(entities: [
            EntityDescription(
                name: "Team",
                attributes: [
                    AttributeDescription(name: "teamName", type: .string, minLength: 1),
                    AttributeDescription(name: "qualifyingZone", type: .string),
                    AttributeDescription(name: "wins", type: .integer, defaultValue: .integer(0), minValue: .integer(0)),
                ],
                indexes: [IndexDescription(properties: ["qualifyingZone", "-wins", "teamName"])],
                objectClass: Team.self)
        ])
        let store = try PersistentStore(url: folder.appendingPathComponent("worldcup.sqlite"), model: sameModel)
        let context = ObjectContext(store: store)

        let team = try context.insert(Team.self)
        team.teamName = "Algeria"
        team.qualifyingZone = "Africa"
        team.wins += 1
        XCTAssertTrue(context.hasChanges)
        try context.save()

        var request = FetchRequest<Team>(
            predicate: try FetchPredicate(format: "qualifyingZone == %@ AND wins >= %d", "Africa", 1),
            sortDescriptors: [FetchSortDescriptor(key: "wins", ascending: false), FetchSortDescriptor(key: "teamName")])
        request.fetchBatchSize = 20
        XCTAssertEqual(try context.fetch(request).map(\.teamName), ["Algeria"])
        let sameFilter = Key("qualifyingZone") == "Africa" && Key("wins") >= 1
        XCTAssertEqual(sameFilter, request.predicate)

        let controller = FetchedResultsController(
            fetchRequest: FetchRequest<Team>(sortDescriptors: [
                FetchSortDescriptor(key: "qualifyingZone"), FetchSortDescriptor(key: "wins", ascending: false)]),
            managedObjectContext: context, sectionNameKeyPath: "qualifyingZone")
        let delegate = Delegate()
        controller.delegate = delegate
        try controller.performFetch()
        XCTAssertEqual(controller.sections?.map(\.name), ["Africa"])
        XCTAssertTrue(controller.object(at: IndexPath(item: 0, section: 0)) === team)
        team.wins += 1
        try context.save()
        XCTAssertEqual(delegate.batches.last?.objectChanges.map(\.type), [.update])
    }
}
