import Foundation
import GRDB
import ObjectStore
import XCTest

final class StoreTests: XCTestCase {
    private func bytes(_ url: URL) throws -> Data { try Data(contentsOf: url) }

    func testANewFileGetsTheSchemaAndReopens() throws {
        let url = try temporaryFolder(self).appendingPathComponent("teams.sqlite")
        do {
            let store = try PersistentStore(url: url, model: Fixtures.worldCupModel())
            let context = ObjectContext(store: store)
            try Fixtures.insertTeams(into: context)
        }
        let store = try PersistentStore(url: url, model: Fixtures.worldCupModel())
        let context = ObjectContext(store: store)
        XCTAssertEqual(try context.count(for: FetchRequest<Team>()), Fixtures.worldCupTeams.count)
        let indexes = try store.database.read { db in try db.indexes(on: "Team").map(\.columns) }
        XCTAssertTrue(indexes.contains(["qualifyingZone", "wins", "teamName"]))
    }

    func testAddingAttributesEntitiesAndIndexesMigratesInPlace() throws {
        let url = try temporaryFolder(self).appendingPathComponent("teams.sqlite")
        do {
            let context = ObjectContext(store: try PersistentStore(url: url, model: Fixtures.worldCupModel()))
            try Fixtures.insertTeams(into: context)
        }
        var team = Fixtures.team
        team.attributes += [
            AttributeDescription(name: "losses", type: .integer, defaultValue: .integer(0)),
            AttributeDescription(name: "coach", type: .string, isOptional: true),
        ]
        team.indexes.append(IndexDescription(properties: ["losses"]))
        let newModel = try Model(entities: [team, EntityDescription(name: "Stadium", attributes: [AttributeDescription(name: "city", type: .string)])])
        let store = try PersistentStore(url: url, model: newModel)
        let context = ObjectContext(store: store)
        let teams = try context.fetch(FetchRequest<Team>())
        XCTAssertEqual(teams.count, Fixtures.worldCupTeams.count)
        XCTAssertEqual(teams.first?.attributeValue(forKey: "losses"), .integer(0))
        XCTAssertEqual(teams.first?.attributeValue(forKey: "coach"), .null)
        try context.insert(entityName: "Stadium").setValue("Rio", forKey: "city")
        try context.save()
        let migrations = try store.database.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        XCTAssertEqual(migrations.filter { $0.hasPrefix("model ") }.count, 2)
        XCTAssertEqual(migrations.filter { !$0.hasPrefix("model ") }, ["change history", "history-only triggers", "numbered history", "history of changed columns"])
        // The update trigger was made again with the columns added: an update of one is
        // recorded by its name.
        let token = try store.currentHistoryToken()
        try DatabaseQueue(path: url.path).write { try $0.execute(sql: "UPDATE Team SET coach = 'Otto' WHERE teamName = 'Ghana'") }
        XCTAssertEqual(try store.changes(since: token).changes.updated.values.first, ["coach"])
        // Opening again with the same model changes nothing.
        XCTAssertNoThrow(try PersistentStore(url: url, model: newModel))
    }

    func testIncompatibleModelsAreRefusedAndTheFileIsUntouched() throws {
        let url = try Fixtures.closedWorldCupFile(self)
        let before = try bytes(url)

        var retyped = Fixtures.team
        retyped.attributes[2].type = .integer
        var removed = Fixtures.team
        removed.attributes.remove(at: 2)
        var required = Fixtures.team
        required.attributes.append(AttributeDescription(name: "coach", type: .string))
        for (entity, expected) in [(retyped, "Team.imageName: the type changed from string to integer"), (removed, "was removed"),
                                   (required, "needs a default value")] {
            XCTAssertThrowsError(try PersistentStore(url: url, model: Model(entities: [entity]))) { error in
                let error = error as? StoreError
                XCTAssertEqual(error?.kind, .incompatibleModel)
                XCTAssertTrue(error?.description.contains(url.path) == true)
                XCTAssertTrue(error?.description.contains(expected) == true, "\(String(describing: error))")
            }
            XCTAssertEqual(try bytes(url), before)
        }
        XCTAssertEqual(try ObjectContext(store: PersistentStore(url: url, model: Fixtures.worldCupModel()))
            .count(for: FetchRequest<Team>()), Fixtures.worldCupTeams.count)
    }

    func testAFileThatIsNotADatabaseIsRefusedAndKept() throws {
        let url = try temporaryFolder(self).appendingPathComponent("notes.txt")
        let text = Data("Shopping list: milk, eggs\n".utf8)
        try text.write(to: url)
        XCTAssertThrowsError(try PersistentStore(url: url, model: Fixtures.worldCupModel())) { error in
            XCTAssertEqual((error as? StoreError)?.kind, .notADatabase)
            XCTAssertTrue("\(error)".contains("notes.txt"))
        }
        XCTAssertEqual(try bytes(url), text)
    }

    func testACorruptDatabaseIsRefusedAndKept() throws {
        let url = try Fixtures.closedWorldCupFile(self)
        var data = try bytes(url)
        // Keep the header, scramble every page after the first.
        for i in stride(from: 4096, to: data.count, by: 1) { data[i] = UInt8(truncatingIfNeeded: i &* 31) }
        try data.write(to: url)
        XCTAssertThrowsError(try PersistentStore(url: url, model: Fixtures.worldCupModel())) { error in
            XCTAssertEqual((error as? StoreError)?.kind, .corrupt, "\(error)")
            XCTAssertTrue("\(error)".contains("teams.sqlite"))
        }
        XCTAssertEqual(try bytes(url), data)
    }

    func testADatabaseOfAnotherApplicationIsRefusedAndKept() throws {
        let url = try temporaryFolder(self).appendingPathComponent("other.sqlite")
        try DatabaseQueue(path: url.path).write { try $0.execute(sql: "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')") }
        let before = try bytes(url)
        XCTAssertThrowsError(try PersistentStore(url: url, model: Fixtures.worldCupModel())) { error in
            XCTAssertEqual((error as? StoreError)?.kind, .foreignDatabase)
            XCTAssertTrue("\(error)".contains("notes"))
        }
        XCTAssertEqual(try bytes(url), before)
    }

    func testAnInMemoryStoreWorks() throws {
        let context = ObjectContext(store: try PersistentStore.inMemory(model: Fixtures.worldCupModel()))
        try Fixtures.insertTeams(into: context)
        XCTAssertEqual(try context.count(for: FetchRequest<Team>()), Fixtures.worldCupTeams.count)
    }
}

/// A store opened for reading only: it reads as any store does, writes nothing, refuses a
/// save with the changes kept, and refuses to migrate.
final class ReadOnlyStoreTests: XCTestCase {
    func testAReadOnlyStoreReadsAndNeverWrites() throws {
        let url = try Fixtures.closedWorldCupFile(self)
        let before = try Data(contentsOf: url)

        let store = try PersistentStore(readingFrom: url, model: Fixtures.worldCupModel())
        XCTAssertTrue(store.isReadOnly)
        let context = ObjectContext(store: store)
        let teams = try context.fetch(FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "teamName")]))
        XCTAssertEqual(teams.count, Fixtures.worldCupTeams.count)
        teams[0].wins = 9
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as? StoreError)?.kind, .readOnly, "\(error)")
        }
        XCTAssertTrue(context.hasChanges, "the change is kept")
        XCTAssertEqual(teams[0].wins, 9)
        XCTAssertEqual(try context.count(for: FetchRequest<Team>()), Fixtures.worldCupTeams.count, "fetching with unsaved changes still reads")
        XCTAssertEqual(try Data(contentsOf: url), before, "the file is unchanged")

        // A model that would need a migration is refused, not migrated.
        var entities = try Fixtures.worldCupModel().entities
        entities[0].attributes.append(AttributeDescription(name: "losses", type: .integer, defaultValue: .integer(0)))
        XCTAssertThrowsError(try PersistentStore(readingFrom: url, model: Model(entities: entities))) { error in
            XCTAssertEqual((error as? StoreError)?.kind, .readOnly, "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: url), before)
        XCTAssertThrowsError(try PersistentStore(readingFrom: url.appendingPathExtension("missing"), model: Fixtures.worldCupModel()))
    }
}
