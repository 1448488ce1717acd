import Foundation
import ObjectStore
import PostgresNIO
@testable import Sharing
import XCTest

final class ServerSchemaTests: XCTestCase {
    private let logger = ServerTestDatabase.logger
    private let log = ServerChangeLog(model: BoardModel.model)

    func testCreatingTwiceAndAtOnceFromTwoConnectionsIsHarmless() async throws {
        try await ServerTestDatabase.with { database in
            let schema = ServerSchema(model: BoardModel.model), logger = self.logger
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask { try await database.withConnection { try await schema.create(on: $0, logger: logger) } }
                }
                try await group.waitForAll()
            }
            try await database.withConnection { connection in
                try await schema.create(on: connection, logger: self.logger)
                let tables = try await connection.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", logger: self.logger)
                for try await count in tables.decode(Int64.self) { XCTAssertEqual(count, 6, "Board, Card, the change log, the server's state, its pushes and its deleted objects") }
            }
        }
    }

    /// A desktop that found the schema missing and waited for another desktop making it
    /// finds it made once it has the lock, and changes nothing: its DDL would lock the
    /// tables against the other desktop, already writing to them (a deadlock with a seed,
    /// once in CI). The trigger function's catalog row is the one the first desktop wrote.
    func testADesktopThatWaitedForAnotherMakingTheSchemaMakesItNoMore() async throws {
        try await ServerTestDatabase.with { database in
            let schema = ServerSchema(model: BoardModel.model), logger = self.logger
            try await database.withConnection { holder in
                try await ServerTestDatabase.execute("BEGIN", on: holder)
                try await ServerTestDatabase.execute("SELECT pg_advisory_xact_lock(\(ServerSchema.advisoryLockKey))", on: holder)
                let waiter = Task { try await database.withConnection { try await schema.create(on: $0, logger: logger) } }
                try await eventually("the other desktop waits for the lock") {
                    try await database.withConnection { connection in
                        try await ServerTestDatabase.number("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", on: connection) == 1
                    }
                }
                // Made in the holder's transaction (a BEGIN inside it only warns), which commits.
                try await schema.create(on: holder, logger: logger)
                let made = try await ServerTestDatabase.number("SELECT xmin::text::bigint FROM pg_proc WHERE proname = 'Z_record_change'", on: holder)
                try await waiter.value
                let after = try await ServerTestDatabase.number("SELECT xmin::text::bigint FROM pg_proc WHERE proname = 'Z_record_change'", on: holder)
                XCTAssertNotNil(made)
                XCTAssertEqual(after, made, "the desktop that waited made nothing again")
            }
        }
    }

    func testANewerModelAddsItsColumns() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                let older = try Model(entities: [EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)])])
                let newer = try Model(entities: [EntityDescription(name: "Note", attributes: [
                    AttributeDescription(name: "text", type: .string), AttributeDescription(name: "pinned", type: .bool),
                ])])
                try await ServerSchema(model: older).create(on: connection, logger: self.logger)
                try await ServerTestDatabase.execute(#"INSERT INTO "Note" ("Z_ID", text) VALUES (gen_random_uuid(), 'kept')"#, on: connection)
                try await ServerSchema(model: newer).create(on: connection, logger: self.logger)
                try await ServerTestDatabase.execute(#"UPDATE "Note" SET pinned = true"#, on: connection)
                let page = try await ServerChangeLog(model: newer).pull(after: .start, on: connection, logger: self.logger)
                XCTAssertEqual(page.changes.map(\.kind), [.insert, .update])
                XCTAssertEqual(page.changes.last?.values, ["text": .string("kept"), "pinned": .bool(true)])
                XCTAssertEqual(page.changes.last?.changedProperties, ["pinned"])
            }
        }
    }

    func testEveryWriteIsLoggedWithItsValuesVersionAndChangedColumns() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: self.logger)
                let board = UUID(), card = UUID()
                let due = Date(timeIntervalSinceReferenceDate: 789_012_345.678_901_2)
                try await connection.query("""
                    INSERT INTO "Board" ("Z_ID", name) VALUES (\(board), 'Home');
                    """, logger: self.logger)
                try await connection.query("""
                    INSERT INTO "Card" ("Z_ID", title, count, score, done, due, photo, board)
                    VALUES (\(card), 'Milk "2%"', \(Int64.max), 'NaN', false, \(due.timeIntervalSinceReferenceDate), '\\x00ff10'::bytea, \(board))
                    """, logger: self.logger)
                try await ServerTestDatabase.execute(#"UPDATE "Card" SET done = true, count = count"#, on: connection)
                // Changes nothing: dropped before it is written.
                try await ServerTestDatabase.execute(#"UPDATE "Card" SET done = true"#, on: connection)
                try await ServerTestDatabase.execute(#"DELETE FROM "Card""#, on: connection)

                let changes = try await self.log.pull(after: .start, on: connection, logger: self.logger).changes
                XCTAssertEqual(changes.map(\.kind), [.insert, .insert, .update, .delete])
                XCTAssertEqual(changes.map(\.object), [board, card, card, card])
                XCTAssertEqual(changes.map(\.version), [1, 1, 2, 3])
                XCTAssertEqual(changes[0].values, ["name": .string("Home")])
                XCTAssertEqual(changes[1].changedProperties, ["board", "count", "done", "due", "photo", "score", "title"])
                let values = changes[1].values
                XCTAssertEqual(values["title"], .string("Milk \"2%\""))
                XCTAssertEqual(values["count"], .integer(.max))
                guard case .double(let score)? = values["score"] else { return XCTFail("score \(String(describing: values["score"]))") }
                XCTAssertTrue(score.isNaN)
                XCTAssertEqual(values["done"], .bool(false))
                XCTAssertEqual(values["due"], .date(due), "a date round-trips exactly")
                XCTAssertEqual(values["photo"], .binary(Data([0, 255, 16])))
                XCTAssertEqual(values["board"], .string(board.uuidString.lowercased()))
                XCTAssertEqual(changes[2].changedProperties, ["done"])
                XCTAssertEqual(changes[2].values["done"], .bool(true))
                XCTAssertEqual(changes[3].values, [:])
                XCTAssertEqual(changes[3].changedProperties, [])
            }
        }
    }

    /// Statements of many rows (a push's, a person's `UPDATE` in psql): each row has its
    /// entry, with its own changed columns; a row the statement leaves as it was has none.
    func testAStatementOfManyRowsLogsEachRowWithItsOwnChangedColumns() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: self.logger)
                let boards = [UUID(), UUID(), UUID()]
                try await connection.query("""
                    INSERT INTO "Board" ("Z_ID", name) VALUES (\(boards[0]), 'Home'), (\(boards[1]), 'Work'), (\(boards[2]), 'Shop')
                    """, logger: self.logger)
                // Work keeps its name: no entry, no new version.
                try await ServerTestDatabase.execute(#"UPDATE "Board" SET name = CASE name WHEN 'Work' THEN 'Work' ELSE name || '!' END"#, on: connection)
                try await ServerTestDatabase.execute(#"DELETE FROM "Board" WHERE name <> 'Work'"#, on: connection)

                let changes = try await self.log.pull(after: .start, on: connection, logger: self.logger).changes
                XCTAssertEqual(changes.map(\.kind), [.insert, .insert, .insert, .update, .update, .delete, .delete])
                XCTAssertEqual(Set(changes[0..<3].map(\.object)), Set(boards))
                XCTAssertEqual(changes[0..<3].map(\.version), [1, 1, 1])
                XCTAssertEqual(changes[0..<3].map(\.changedProperties), [["name"], ["name"], ["name"]])
                let updates = Dictionary(uniqueKeysWithValues: changes[3..<5].map { ($0.object, $0) })
                XCTAssertEqual(Set(updates.keys), [boards[0], boards[2]])
                XCTAssertEqual(updates[boards[0]]?.values, ["name": .string("Home!")])
                XCTAssertEqual(updates[boards[2]]?.values, ["name": .string("Shop!")])
                XCTAssertEqual(updates.values.map(\.changedProperties), [["name"], ["name"]])
                XCTAssertEqual(updates.values.map(\.version), [2, 2])
                XCTAssertEqual(Set(changes[5...].map(\.object)), [boards[0], boards[2]])
                XCTAssertEqual(changes[5...].map(\.version), [3, 3])
                // An object inserted again under a deleted ID goes on from its delete's version.
                try await connection.query(#"INSERT INTO "Board" ("Z_ID", name) VALUES (\#(boards[0]), 'Home again')"#, logger: self.logger)
                let again = try await self.log.pull(after: changes.last!.cursor, on: connection, logger: self.logger).changes
                XCTAssertEqual(again.map(\.version), [4])
            }
        }
    }

    /// An insert's version starts above its object's remembered delete and above every
    /// forgotten one, in statements of many rows; the version trigger takes what they are
    /// from a setting read once a statement, and a statement that changes that setting as
    /// it goes (a function in its values) is refused, nothing of it written or logged.
    func testAnInsertStartsAboveEveryDeleteEvenWhenItsStatementChangesTheSettingThatHoldsThem() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: self.logger)
                let attic = UUID(), garden = UUID(), home = UUID(), work = UUID()
                // Inserts two boards in one statement, and gives back their versions.
                let insert = { (first: (id: UUID, name: String), second: (id: UUID, name: String)) -> [Int64?] in
                    try await connection.query(#"INSERT INTO "Board" ("Z_ID", name) VALUES (\#(first.id), \#(first.name)), (\#(second.id), \#(second.name))"#, logger: self.logger)
                    var versions: [Int64?] = []
                    for id in [first.id, second.id] {
                        versions.append(try await ServerTestDatabase.number(#"SELECT "Z_VERSION" FROM "Board" WHERE "Z_ID" = '\#(id.uuidString.lowercased())'"#, on: connection))
                    }
                    return versions
                }
                try await connection.query(#"INSERT INTO "Board" ("Z_ID", name) VALUES (\#(attic), 'Attic'), (\#(garden), 'Garden')"#, logger: self.logger)
                try await ServerTestDatabase.execute(#"UPDATE "Board" SET name = name || '!'"#, on: connection)
                try await ServerTestDatabase.execute(#"DELETE FROM "Board""#, on: connection)
                // Their deletes remembered at version 3: Attic back at 4, beside a new board at 1.
                let homeAndAttic = try await insert((home, "Home"), (attic, "Attic again"))
                XCTAssertEqual(homeAndAttic, [1, 4])

                // A statement that tells the version trigger, as it goes, that no delete is remembered.
                let pretend = #"set_config('\#(ServerNames.insertFloorSetting)', (SELECT oid FROM pg_class WHERE relname = 'Board')::text || ':0:false', true)"#
                let refused = { (id: String, version: Int) in
                    do {
                        try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) SELECT \#(id), 'Sneaky ' || \#(pretend)"#, on: connection)
                        XCTFail("the insert went through")
                    } catch let error as PSQLError {
                        let message = error.serverInfo?[.message] ?? ""
                        XCTAssertTrue(message.contains("not above the version of a delete (\(version)), so nothing of this statement was written"), message)
                        XCTAssertTrue(message.contains("do not change the setting \(ServerNames.insertFloorSetting)"), message)
                    }
                }
                let logged = try await ServerTestDatabase.number(#"SELECT count(*) FROM "Z_CHANGES""#, on: connection)
                try await refused("'\(garden.uuidString.lowercased())'", 3)
                let stillLogged = try await ServerTestDatabase.number(#"SELECT count(*) FROM "Z_CHANGES""#, on: connection)
                XCTAssertEqual(stillLogged, logged, "nothing of the statement logged")
                let gardenRows = try await ServerTestDatabase.number(#"SELECT count(*) FROM "Board" WHERE "Z_ID" = '\#(garden.uuidString.lowercased())'"#, on: connection)
                XCTAssertEqual(gardenRows, 0, "nor written")

                // The deletes forgotten, as a prune forgets them: every insert starts above the
                // highest, read once for the statement, and a statement cannot lower it.
                try await ServerTestDatabase.execute(#"DELETE FROM "Z_DELETED""#, on: connection)
                try await ServerTestDatabase.execute(#"INSERT INTO "Z_SHARING" (key, value) VALUES ('\#(ServerNames.deletedFloorKey)', '7')"#, on: connection)
                let gardenAndWork = try await insert((garden, "Garden again"), (work, "Work"))
                XCTAssertEqual(gardenAndWork, [8, 8])
                try await refused("gen_random_uuid()", 7)
                let boards = try await ServerTestDatabase.number(#"SELECT count(*) FROM "Board""#, on: connection)
                XCTAssertEqual(boards, 4)
            }
        }
    }

    /// A table whose log trigger runs a row (an entity with an ownership) has no statement
    /// to check the inserts' versions: its version trigger does not read the setting, so
    /// one written before the insert cannot make an object skip its delete.
    func testAnOwnedObjectInsertedAgainStartsAboveItsDeleteWhateverTheSettingSays() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: RowLevelSecurityTests.model).create(on: connection, logger: self.logger)
                let list = UUID().uuidString.lowercased()
                try await ServerTestDatabase.execute(#"INSERT INTO "List" ("Z_ID", title, shared) VALUES ('\#(list)', 'Diary', false)"#, on: connection)
                try await ServerTestDatabase.execute(#"UPDATE "List" SET title = 'Journal'"#, on: connection)
                try await ServerTestDatabase.execute(#"DELETE FROM "List""#, on: connection)
                try await ServerTestDatabase.execute("BEGIN", on: connection)
                try await ServerTestDatabase.execute(#"SELECT set_config('\#(ServerNames.insertFloorSetting)', (SELECT oid FROM pg_class WHERE relname = 'List')::text || ':0:false', true)"#, on: connection)
                try await ServerTestDatabase.execute(#"INSERT INTO "List" ("Z_ID", title, shared) VALUES ('\#(list)', 'Diary again', false)"#, on: connection)
                try await ServerTestDatabase.execute("COMMIT", on: connection)
                let version = try await ServerTestDatabase.number(#"SELECT "Z_VERSION" FROM "List""#, on: connection)
                XCTAssertEqual(version, 4, "above its delete's version, 3")
            }
        }
    }

    /// A version written by hand is not kept: the row takes its next one, as a push's
    /// update does (which raises it itself, without the trigger's function); an update that
    /// only writes the same values is dropped however it writes the version.
    func testAVersionWrittenByHandIsReplacedByTheRowsNext() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: self.logger)
                try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", "Z_VERSION", name) VALUES (gen_random_uuid(), 40, 'Home')"#, on: connection)
                var version = try await ServerTestDatabase.number(#"SELECT "Z_VERSION" FROM "Board""#, on: connection)
                XCTAssertEqual(version, 1)
                try await ServerTestDatabase.execute(#"UPDATE "Board" SET "Z_VERSION" = 40, name = 'Work'"#, on: connection)
                try await ServerTestDatabase.execute(#"UPDATE "Board" SET "Z_VERSION" = "Z_VERSION" - 1, name = 'Shop'"#, on: connection)
                try await ServerTestDatabase.execute(#"UPDATE "Board" SET "Z_VERSION" = "Z_VERSION" + 1, name = 'Attic'"#, on: connection)
                try await ServerTestDatabase.execute(#"UPDATE "Board" SET "Z_VERSION" = 7, name = 'Attic'"#, on: connection)
                version = try await ServerTestDatabase.number(#"SELECT "Z_VERSION" FROM "Board""#, on: connection)
                XCTAssertEqual(version, 4)
                let changes = try await self.log.pull(after: .start, on: connection, logger: self.logger).changes
                XCTAssertEqual(changes.map(\.version), [1, 2, 3, 4])
                XCTAssertEqual(changes.map { $0.values["name"] }, ["Home", "Work", "Shop", "Attic"].map { Value.string($0) })
            }
        }
    }

    func testAGlobalIDCannotChange() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: self.logger)
                try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), 'Home')"#, on: connection)
                do {
                    try await ServerTestDatabase.execute(#"UPDATE "Board" SET "Z_ID" = gen_random_uuid()"#, on: connection)
                    XCTFail("the update went through")
                } catch let error as PSQLError {
                    XCTAssertTrue(error.serverInfo?[.message]?.contains("cannot change") == true, String(reflecting: error))
                }
            }
        }
    }

    func testACommittedWriteWakesAListenerWithoutData() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { listener in
                try await database.withConnection { writer in
                    try await ServerSchema(model: BoardModel.model).create(on: listener, logger: self.logger)
                    let logger = self.logger
                    try await listener.listen(on: ServerSchema.notificationChannel) { notifications in
                        try await ServerTestDatabase.execute("BEGIN", on: writer)
                        for name in ["a", "b", "c"] {
                            try await writer.query(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), \#(name))"#, logger: logger)
                        }
                        try await ServerTestDatabase.execute("COMMIT", on: writer)
                        var iterator = notifications.makeAsyncIterator()
                        let notification = try await iterator.next()
                        XCTAssertEqual(notification?.payload, "", "a wake-up carries no data")
                    }
                }
            }
        }
    }
}
