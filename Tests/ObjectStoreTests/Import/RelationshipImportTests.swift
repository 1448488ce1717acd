import Foundation
import ObjectStore
import XCTest

/// To-one relationship columns: the value of the destination's first string attribute.
final class RelationshipImportTests: XCTestCase {
    private var store: PersistentStore!
    private var folder: URL!

    override func setUpWithError() throws {
        folder = try temporaryFolder(self)
        store = try ImportFixtures.store(ImportFixtures.staffModel(), in: folder)
        let departments = try ImportFixtures.write("title\nSales\nResearch\nTwins\nTwins\n", to: "departments.csv", in: folder)
        _ = try ObjectImporter(store: store, entityName: "Department", file: departments).run()
    }

    private func importPeople(_ csv: String, chunkSize: Int = 1000) throws -> ImportResult {
        let file = try ImportFixtures.write(csv, to: "people.csv", in: folder)
        return try ObjectImporter(store: store, entityName: "Person", file: file, chunkSize: chunkSize).run()
    }

    /// Each person's name, department title and manager name.
    private func people() throws -> [[String?]] {
        let context = ObjectContext(store: store, queue: DispatchQueue(label: "people"))
        return try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Person")).map { person in
                [try person.value(forKey: "name") as? String,
                 try (person.value(forKey: "department") as? ManagedObject)?.value(forKey: "title") as? String,
                 try (person.value(forKey: "manager") as? ManagedObject)?.value(forKey: "name") as? String]
            }
        }
    }

    func testAToOneColumnFindsTheDestinationByItsFirstStringAttribute() throws {
        // Bo's manager Ann is in the same chunk, not saved yet; Cy's (Bo) in an earlier chunk with chunks of 2.
        let result = try importPeople("name,department,manager\nAnn,Sales,\nBo,Research,Ann\nCy,Sales,Bo\n", chunkSize: 2)
        XCTAssertEqual(result.recordsImported, 3)
        XCTAssertEqual(try people(), [["Ann", "Sales", nil], ["Bo", "Research", "Ann"], ["Cy", "Sales", "Bo"]])
    }

    func testAValueThatFindsNoObjectOrSeveralIsABadRecord() throws {
        let missing = try XCTUnwrap(ImportFixtures.importError { try importPeople("name,department\nAnn,Sales\nBo,Marketing\n") })
        XCTAssertEqual(missing.kind, .badRecord)
        XCTAssertEqual(missing.line, 3)
        XCTAssertEqual(missing.field, "department")
        XCTAssertEqual(missing.message, "no Department has the title \"Marketing\"; give the title of an existing Department (import the Department objects first); fix the line and import again to resume there")
        XCTAssertEqual(try people(), [["Ann", "Sales", nil]])

        let twice = try XCTUnwrap(ImportFixtures.importError { try importPeople("name,department\nAnn,Sales\nBo,Twins\n") })
        XCTAssertEqual(twice.line, 3)
        XCTAssertTrue(twice.message.hasPrefix("more than one Department has the title \"Twins\""), twice.message)
    }

    func testARequiredRelationshipLeftEmptyFailsValidation() throws {
        let error = try XCTUnwrap(ImportFixtures.importError { try importPeople("name,department\nAnn,\n") })
        XCTAssertEqual(error.field, "department")
        XCTAssertEqual(error.message, "is required; set a Department; fix the line and import again to resume there")
    }

    func testToManyRelationshipsAndMissingRequiredOnesAreRefusedBeforeImporting() throws {
        let toMany = try ImportFixtures.write("title,members\nOps,Ann\n", to: "departments.csv", in: folder)
        let error = try XCTUnwrap(ImportFixtures.importError { try ObjectImporter(store: store, entityName: "Department", file: toMany) })
        XCTAssertEqual(error.kind, .badHeader)
        XCTAssertEqual(error.field, "members")
        XCTAssertEqual(error.message, "'members' is a to-many relationship, which an import cannot set; import Person with its 'department' column instead; Department takes title; nothing was imported")

        let noDepartment = try ImportFixtures.write("name\nAnn\n", to: "people.csv", in: folder)
        let missing = try XCTUnwrap(ImportFixtures.importError { try ObjectImporter(store: store, entityName: "Person", file: noDepartment) })
        XCTAssertEqual(missing.field, "department")
        XCTAssertTrue(missing.message.hasPrefix("the header has no column for department"), missing.message)
    }

    func testTheUnknownColumnMessageListsRelationshipsWithTheirKey() throws {
        let file = try ImportFixtures.write("name,boss\n", to: "people.csv", in: folder)
        let error = try XCTUnwrap(ImportFixtures.importError { try ObjectImporter(store: store, entityName: "Person", file: file) })
        XCTAssertEqual(error.message, "Person has no attribute or to-one relationship 'boss'; Person takes name, age, department (the title of a Department), manager (the name of a Person); nothing was imported")
    }
}
