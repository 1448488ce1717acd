import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// The README's examples, run as written (in a temporary folder).
final class ReadmeExampleTests: XCTestCase {
    final class Team: ManagedObject {
        @Attribute(minLength: 1, maxLength: 60) var teamName: String
        @Attribute(maxLength: 40) var qualifyingZone: String
        @Attribute(maxLength: 100) var imageName: String?   // optional
        @Attribute(default: 0, minValue: 0, merge: .add) var wins: Int   // a counter: taps add up

        override class var entityIndexes: [IndexDescription] {
            [IndexDescription(properties: ["qualifyingZone", "-wins", "teamName"])]
        }
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
        let sameModel = try Model(classes: [Team.self])
        XCTAssertEqual(sameModel.fingerprint, model.fingerprint)
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
