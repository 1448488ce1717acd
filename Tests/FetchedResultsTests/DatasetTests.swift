import Datasets
import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// The shipped datasets load, seed and show as their view files say.
final class DatasetTests: XCTestCase {
    private func open(_ name: String) throws -> (Dataset, ObjectContext, FetchedResultsController<ManagedObject>) {
        let dataset = try Dataset.load(named: name)
        let store = try dataset.openStore(at: temporaryFolder(self).appendingPathComponent("\(name).sqlite"))
        let context = ObjectContext(store: store)
        let controller = try dataset.makeController(context: context)
        try controller.performFetch()
        return (dataset, context, controller)
    }

    func testWorldCupShowsTeamsByZone() throws {
        let (dataset, _, controller) = try open("worldcup")
        XCTAssertEqual(controller.numberOfObjects, 32)
        XCTAssertEqual(controller.sections?.map(\.name), ["Africa", "Asia", "Europe", "North/Central America", "South America"])
        let first = controller.object(at: IndexPath(item: 0, section: 0))
        XCTAssertEqual(ViewConfiguration.render(dataset.view.row.title, for: first), "Algeria")
        XCTAssertEqual(ViewConfiguration.render(dataset.view.row.subtitle!, for: first), "Wins: 0")
    }

    /// Every text a shipped dataset stores has a length its meaning allows (a 500-character
    /// team name once pushed the window to 7,000 pixels); a longer one is refused on save,
    /// naming the attribute and its limit, and nothing is written.
    func testEveryTextHasASensibleMaximumAndALongerOneIsRefused() throws {
        for name in Dataset.shipped {
            let dataset = try Dataset.load(named: name)
            for entity in dataset.model.entities {
                for attribute in entity.attributes where attribute.type == .string {
                    let limit = try XCTUnwrap(attribute.maxLength, "\(name): \(entity.name).\(attribute.name) has no maxLength")
                    XCTAssertTrue((2...200).contains(limit), "\(name): \(entity.name).\(attribute.name) maxLength \(limit)")
                }
            }
        }
        let (_, context, controller) = try open("worldcup")
        let team = controller.object(at: IndexPath(item: 0, section: 0))
        try team.setValue(String(repeating: "W", count: 61), forKey: "teamName")
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertTrue("\(error)".contains("teamName"), "\(error)")
            XCTAssertTrue("\(error)".contains("60"), "the limit is named: \(error)")
        }
        context.rollback()
        XCTAssertEqual(ViewConfiguration.render("{teamName}", for: team), "Algeria", "nothing was written")
        try team.setValue(String(repeating: "W", count: 60), forKey: "teamName")
        XCTAssertNoThrow(try context.save(), "60 characters fit")
    }

    func testMoviesAreSharedOrNot() throws {
        let (dataset, _, controller) = try open("movies")
        XCTAssertEqual(controller.sections?.map { dataset.view.sectionTitle(forSectionName: $0.name) }, ["Lent", "Not lent"])
        XCTAssertGreaterThanOrEqual(controller.numberOfObjects, 40)
    }

    func testTodoShowsItsEmptyList() throws {
        let (_, _, controller) = try open("todo")
        let sections = try XCTUnwrap(controller.sections)
        XCTAssertEqual(sections.map(\.name), ["Groceries", "Home", "Someday", "Work"])
        XCTAssertEqual(sections[2].numberOfObjects, 0)
        XCTAssertEqual(sections[2].sectionObject?.attributeValue(forKey: "title"), .string("Someday"))
    }

    func testFailedBanksSortAcrossTheirDetails() throws {
        let (_, _, controller) = try open("failedbanks")
        XCTAssertGreaterThanOrEqual(controller.numberOfObjects, 500)
        let dates = (0..<40).map { i -> Value in
            let bank = controller.object(at: IndexPath(item: i, section: 0))
            return (bank.relatedObjects(forKey: "details").first as? ManagedObject)?.attributeValue(forKey: "closeDate") ?? .null
        }
        for (a, b) in zip(dates, dates.dropFirst()) {
            guard case .date(let newer) = a, case .date(let older) = b else { return XCTFail("missing close date") }
            XCTAssertGreaterThanOrEqual(newer, older)
        }
    }

    func testSearchAndSortOptionsChangeTheRequest() throws {
        let (dataset, context, _) = try open("movies")
        let controller = try dataset.makeController(context: context, sortOption: 0, search: "amelie")
        try controller.performFetch()
        XCTAssertEqual(controller.fetchedObjects?.map { ViewConfiguration.render("title", for: $0) }, ["Amélie"])
    }

    func testBadViewFilesNameTheFileAndKey() throws {
        let folder = try temporaryFolder(self)
        let url = folder.appendingPathComponent("view.json")
        try Data(#"{"fetchRequest": {"entity": "Team", "sortDescriptors": [{"key": "wins", "ascendng": false}]}, "row": {"title": "teamName"}}"#.utf8).write(to: url)
        XCTAssertThrowsError(try ViewConfiguration.load(from: url)) { error in
            XCTAssertTrue("\(error)".contains("view.json: fetchRequest.sortDescriptors[0]: unknown key \"ascendng\""), "\(error)")
        }
        try Data(#"{"fetchRequest": {"sortDescriptors": []}, "row": {"title": "teamName"}}"#.utf8).write(to: url)
        XCTAssertThrowsError(try ViewConfiguration.load(from: url)) { error in
            XCTAssertTrue("\(error)".contains("missing \"entity\""), "\(error)")
        }
        let model = try Dataset.load(named: "worldcup").model
        func problem(_ json: String) throws -> String {
            try Data(json.utf8).write(to: url)
            do {
                try ViewConfiguration.load(from: url).validate(against: model)
                return ""
            } catch {
                return "\(error)"
            }
        }
        let row = #""row": {"title": "teamName"}"#
        XCTAssertTrue(try problem(#"{"fetchRequest": {"entity": "Team", "sortDescriptors": [{"key": "wins"}], "sectionKeyPath": "qualifyingZone"}, "# + row + "}")
            .contains("fetchRequest.sortDescriptors: must start with the section key path 'qualifyingZone'"))
        XCTAssertTrue(try problem(#"{"fetchRequest": {"entity": "Team", "sortDescriptors": [{"key": "wins"}]}, "counter": "teamName", "# + row + "}")
            .contains("counter: 'teamName' must be an integer attribute of Team"))
        XCTAssertTrue(try problem(#"{"fetchRequest": {"entity": "Team", "sortDescriptors": [{"key": "wins"}]}, "row": {"title": "Wins: {wns}"}}"#)
            .contains("row.title"))
        XCTAssertEqual(try problem(#"{"fetchRequest": {"entity": "Team", "sortDescriptors": [{"key": "wins"}]}, "# + row + "}"), "")
    }

    func testAKeyHasOneLabelFromTheViewFile() throws {
        let worldCup = try Dataset.load(named: "worldcup").view
        XCTAssertEqual(worldCup.label(forKeyPath: "teamName"), "Team name", "from labels")
        XCTAssertEqual(worldCup.label(forKeyPath: "imageName"), "Image name", "else the key in words")
        XCTAssertEqual(worldCup.counterAction, "Add a win")
        let movies = try Dataset.load(named: "movies").view
        XCTAssertEqual(movies.label(forKeyPath: "lentDate"), "Lent on", "else a dialog field's label")
        XCTAssertEqual(try Dataset.load(named: "failedbanks").view.label(forKeyPath: "details.closeDate"), "Close date")

        let url = try temporaryFolder(self).appendingPathComponent("view.json")
        let model = try Dataset.load(named: "worldcup").model
        func problem(_ rest: String) throws -> String {
            try Data((#"{"fetchRequest": {"entity": "Team", "sortDescriptors": [{"key": "wins"}]}, "row": {"title": "teamName"}, "# + rest + "}").utf8).write(to: url)
            do { try ViewConfiguration.load(from: url).validate(against: model); return "" } catch { return "\(error)" }
        }
        XCTAssertTrue(try problem(#""addFields": [{"key": "teamName", "label": "Team Name"}], "editFields": [{"key": "teamName", "label": "Name"}]"#)
            .contains(#"editFields[0].label: "Name" is not "Team Name""#))
        XCTAssertTrue(try problem(#""labels": {"teamName": "Team name"}, "addFields": [{"key": "teamName", "label": "Name"}]"#)
            .contains("addFields[0].label"))
        XCTAssertTrue(try problem(#""labels": {"teamNme": "Team name"}"#).contains("labels: 'teamNme' is not an attribute"))
        XCTAssertEqual(try problem(#""labels": {"teamName": "Team name"}, "addFields": [{"key": "teamName"}]"#), "")
    }
}
