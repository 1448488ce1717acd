import Foundation
import GRDB
import PostgresNIO
import ObjectStore
@testable import Sharing
import TestSupport
import XCTest

/// Rows written on the server with SQL that do not fit the model (by a colleague with `psql`,
/// a script, an older desktop): neither store takes them, both report them, and both go on
/// exchanging the valid changes made afterwards.
final class RejectedChangeTests: XCTestCase {
    /// The board model with rules: a board's name and a card's title are required and not
    /// empty, a card's count is at least 0.
    static let model = try! Model(entities: [
        EntityDescription(
            name: "Board",
            attributes: [AttributeDescription(name: "name", type: .string, minLength: 1)],
            relationships: [RelationshipDescription(name: "cards", destinationEntity: "Card", inverseName: "board", isToMany: true)]),
        EntityDescription(
            name: "Card",
            attributes: [
                AttributeDescription(name: "title", type: .string, minLength: 1),
                AttributeDescription(name: "count", type: .integer, minValue: .integer(0)),
                AttributeDescription(name: "done", type: .bool),
            ],
            relationships: [RelationshipDescription(name: "board", destinationEntity: "Board", inverseName: "cards")]),
    ])

    private func sql(_ statement: String, on database: ServerTestDatabase) async throws {
        try await database.withConnection { connection in try await ServerTestDatabase.execute(statement, on: connection) }
    }

    private func serverID(ofBoard name: String, on database: ServerTestDatabase) async throws -> UUID {
        try await database.withConnection { connection in
            let rows = try await connection.query(#"SELECT "Z_ID" FROM "Board" WHERE name = \#(name)"#, logger: ServerTestDatabase.logger)
            for try await id in rows.decode(UUID.self) { return id }
            throw EventuallyTimedOut(what: "board \(name) on the server")
        }
    }

    /// Saves the board Home with one card, "first", counting `count`.
    private func saveHomeBoard(withCardCounting count: Int, in context: ObjectContext) throws {
        try context.performAndWait {
            let board = try context.insert(entityName: "Board")
            try board.setValue("Home", forKey: "name")
            let card = try context.insert(entityName: "Card")
            try card.setValue("first", forKey: "title")
            try card.setValue(count, forKey: "count")
            try card.setValue(false, forKey: "done")
            try card.setValue(board, forKey: "board")
            try context.save()
        }
    }

    /// Every text and count in a store, to look for a bad value in it.
    private func storedValues(_ desktop: SharedStore) throws -> (names: [String?], titles: [String?], counts: [Int64?], longest: Int) {
        try desktop.store.database.read { db in
            (try String?.fetchAll(db, sql: "SELECT name FROM Board ORDER BY name"),
             try String?.fetchAll(db, sql: "SELECT title FROM Card ORDER BY title"),
             try Int64?.fetchAll(db, sql: "SELECT count FROM Card"),
             try Int.fetchOne(db, sql: "SELECT max(length(name)) FROM Board") ?? 0)
        }
    }

    func testBadRowsWrittenOnTheServerAreRejectedReportedAndStopNothing() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, model: Self.model)
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database, model: Self.model)
            try await a.session.synchronize()
            try await b.session.synchronize()
            let context = a.context()
            try saveHomeBoard(withCardCounting: 0, in: context)
            try await a.session.synchronize()
            try await eventually("B takes A's board") { try b.boardNames() == ["Home"] }
            let home = try await serverID(ofBoard: "Home", on: database)
            let card = try await database.withConnection { connection in
                for try await id in try await connection.query(#"SELECT "Z_ID" FROM "Card""#, logger: ServerTestDatabase.logger).decode(UUID.self) { return id }
                throw EventuallyTimedOut(what: "the card")
            }

            // Each bad write, the key its rejection names (nil: the row as a whole), and
            // the part of the reason that says why.
            let badWrites: [(what: String, sql: String, key: String?, reason: String)] = [
                ("a NULL in a required attribute", #"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), NULL)"#,
                 "name", "is required"),
                ("a string below minLength", #"UPDATE "Board" SET name = '' WHERE name = 'Home'"#, "name", "must not be empty"),
                ("a number below minValue", #"UPDATE "Card" SET count = -5"#, "count", "must be at least 0 (is -5)"),
                ("a value of the wrong JSON type in the log", #"""
                    INSERT INTO "Z_CHANGES" (entity, object, op, version, changed, "row")
                    VALUES ('Card', '\#(card)', 'update', 1000, '{count}', '{"title": "first", "count": "lots", "done": false, "board": null}')
                    """#, "count", #"= "lots" is not an integer"#),
                ("an unknown entity", #"""
                    INSERT INTO "Z_CHANGES" (entity, object, op, version, changed, "row")
                    VALUES ('Planet', gen_random_uuid(), 'insert', 1, '{name}', '{"name": "Mars"}')
                    """#, nil, "this model has no entity Planet"),
                ("a 10 MB string", #"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), repeat('x', 10000000))"#,
                 nil, "over the limit of 4194304 (SharingLimits.rowBytes)"),
                ("a relationship to an object that does not exist",
                 #"INSERT INTO "Card" ("Z_ID", title, count, done, board) VALUES (gen_random_uuid(), 'orphan', 0, false, gen_random_uuid())"#,
                 "board", "which does not exist"),
            ]
            for (index, bad) in badWrites.enumerated() {
                try await sql(bad.sql, on: database)
                // A valid change made afterwards, on A, reaches B.
                let valid = "Valid \(index)"
                try context.performAndWait {
                    let board = try context.insert(entityName: "Board")
                    try board.setValue(valid, forKey: "name")
                    try context.save()
                }
                try await a.session.synchronize()
                try await eventually("B takes \(valid) after \(bad.what)") { try b.boardNames().contains(valid) }
                try await b.session.synchronize()
                for (name, desktop) in [("A", a), ("B", b)] {
                    let rejected = try desktop.session.rejectedChanges()
                    XCTAssertTrue(rejected.contains { $0.key == bad.key && $0.reason.contains(bad.reason) && $0.direction == .pulled },
                                  "\(name) reports \(bad.what): \(rejected.map(\.description))")
                    XCTAssertEqual(desktop.session.status.state, .connected, "\(name) keeps sharing after \(bad.what)")
                }
            }
            XCTAssertEqual(a.session.status.rejectedChanges, badWrites.count, "the status counts them: \(a.session.status)")

            // A version that goes backwards (a log row written by hand) is older than what the
            // stores took: skipped, like any change a newer one superseded.
            try await sql(#"""
                INSERT INTO "Z_CHANGES" (entity, object, op, version, changed, "row")
                VALUES ('Board', '\#(home)', 'update', 1, '{name}', '{"name": "Backwards"}')
                """#, on: database)
            // Later valid versions of the objects that had bad ones still arrive.
            try await sql(#"UPDATE "Board" SET name = 'Home again' WHERE name = ''"#, on: database)
            try await sql(#"UPDATE "Card" SET count = 7"#, on: database)
            for (name, desktop) in [("A", a), ("B", b)] {
                try await desktop.session.synchronize()
                try await eventually("\(name) takes the board fixed on the server") { try desktop.boardNames().contains("Home again") }
                let stored = try storedValues(desktop)
                XCTAssertFalse(stored.names.contains(nil) || stored.names.contains("") || stored.names.contains("Backwards"), "\(name): \(stored.names)")
                XCTAssertEqual(stored.titles, ["first"], "\(name): no orphan card")
                XCTAssertEqual(stored.counts, [7], "\(name): the count fixed on the server, never -5 or \"lots\"")
                XCTAssertLessThan(stored.longest, 100, "\(name): no 10 MB name")
            }

            // A desktop joining now takes the valid rows and rejects the bad ones, in its snapshot.
            let c = try SharedStore(folder.appendingPathComponent("c.sqlite"), database: database, model: Self.model)
            try await c.session.synchronize()
            XCTAssertEqual(try c.boardNames(), try a.boardNames())
            XCTAssertEqual(try storedValues(c).titles, ["first"])
            let cRejected = try c.session.rejectedChanges()
            XCTAssertEqual(Set(cRejected.compactMap(\.key)), ["name", "board"], cRejected.map(\.description).joined(separator: "\n"))
            XCTAssertTrue(cRejected.contains { $0.key == nil && $0.reason.contains("over the limit of 4194304 (SharingLimits.rowBytes)") },
                          "C refuses the 10 MB board of its snapshot: \(cRejected.map(\.description))")

            // Dismissed, they are gone, and the status says so.
            let last = try XCTUnwrap(try a.session.rejectedChanges().last?.number)
            try a.session.dismissRejectedChanges(through: last)
            XCTAssertEqual(try a.session.rejectedChanges(), [])
            XCTAssertEqual(a.session.status.rejectedChanges, 0)
            await a.stop()
            await b.stop()
            await c.stop()
        }
    }

    /// A column whose type was changed on the server (`ALTER TABLE … TYPE text`, by hand)
    /// holds values of another type. A desktop joining refuses each row of it, naming the
    /// column and what to do, and takes the rest; once the column has its type back, the
    /// rows come in with their next change.
    func testAJoinRefusesTheRowsOfAColumnWhoseTypeWasChangedOnTheServer() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, model: Self.model)
            try await a.session.synchronize()
            let context = a.context()
            try context.performAndWait {
                let board = try context.insert(entityName: "Board")
                try board.setValue("Home", forKey: "name")
                for title in ["first", "second"] {
                    let card = try context.insert(entityName: "Card")
                    try card.setValue(title, forKey: "title")
                    try card.setValue(2, forKey: "count")
                    try card.setValue(false, forKey: "done")
                    try card.setValue(board, forKey: "board")
                }
                try context.save()
            }
            try await a.session.synchronize()
            await a.stop()
            try await sql(#"ALTER TABLE "Card" ALTER COLUMN count TYPE text USING count || ' cards'"#, on: database)

            let c = try SharedStore(folder.appendingPathComponent("c.sqlite"), database: database, model: Self.model)
            try await c.session.synchronize()
            XCTAssertEqual(try c.boardNames(), ["Home"], "the board comes in")
            XCTAssertEqual(try storedValues(c).titles, [], "no card with a count that is not one")
            let rejected = try c.session.rejectedChanges()
            XCTAssertEqual(rejected.count, 2, rejected.map(\.description).joined(separator: "\n"))
            for change in rejected {
                XCTAssertEqual(change.key, "count")
                XCTAssertTrue(change.reason.contains("is not an integer (bigint): its column on the server holds text; give the column back its type"),
                              change.description)
            }
            XCTAssertEqual(c.session.status.state, .connected)

            try await sql(#"ALTER TABLE "Card" ALTER COLUMN count TYPE bigint USING split_part(count, ' ', 1)::bigint"#, on: database)
            try await sql(#"UPDATE "Card" SET count = count + 1"#, on: database)
            try await c.session.synchronize()
            try await eventually("C takes the cards once their column is an integer again") { try storedValues(c).counts == [3, 3] }
            XCTAssertEqual(try storedValues(c).titles, ["first", "second"])
            await c.stop()
        }
    }

    /// A column whose type was changed on the server by hand stops the pushes of edits of
    /// its rows: each round fails, and the desktop says which column and what to do, not only
    /// the server's words. Nothing saved is lost: once the column has its type back, the
    /// edit goes to the server.
    func testAPushToAColumnWhoseTypeWasChangedOnTheServerSaysWhatToDoAndLosesNothing() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, model: Self.model)
            try await a.session.synchronize()
            let context = a.context()
            try saveHomeBoard(withCardCounting: 2, in: context)
            try await a.session.synchronize()
            try await sql(#"ALTER TABLE "Card" ALTER COLUMN count TYPE text USING count || ' cards'"#, on: database)

            try context.performAndWait {
                let card = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Card")).first)
                try card.setValue(3, forKey: "count")
                try context.save()
            }
            try? await a.session.synchronize()
            try await eventually("A's round fails") {
                a.seenStates.contains { if case .offline = $0 { true } else { false } }
            }
            let offline = a.seenStates.compactMap { state -> String? in if case .offline(let reason) = state { reason } else { nil } }
            XCTAssertTrue(offline.contains {
                $0.contains("Card.count is not an integer (bigint): its column on the server holds text; give the column back its type")
                    && $0.contains("edits of Card wait in its store")
            }, "\(offline)")
            XCTAssertEqual(try storedValues(a).counts, [3], "A keeps its edit")

            try await sql(#"ALTER TABLE "Card" ALTER COLUMN count TYPE bigint USING split_part(count, ' ', 1)::bigint"#, on: database)
            try await eventually("A pushes its edit once the column is an integer again") {
                try? await a.session.synchronize()
                return (try? await self.serverCards("count", as: Int64.self, on: database)) == [3]
            }
            XCTAssertEqual(try a.session.conflicts().map(\.details), [])
            await a.stop()
        }
    }

    /// A column dropped on the server by hand (`ALTER TABLE … DROP COLUMN`) would stop every
    /// push and join, which read and write the tables by their columns. The next connection
    /// adds it back, with no values: the desktop that was connected pushes its edit of it
    /// after one failed round that names the column (no conflict: no desktop wrote the row),
    /// a desktop joining takes the row, and nothing saved in a store is lost.
    func testAColumnDroppedOnTheServerIsAddedBackAndSharingGoesOn() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, model: Self.model)
            try await a.session.synchronize()
            let context = a.context()
            try saveHomeBoard(withCardCounting: 2, in: context)
            try await a.session.synchronize()
            try await sql(#"ALTER TABLE "Card" DROP COLUMN title"#, on: database)

            try context.performAndWait {
                let card = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Card")).first)
                try card.setValue("renamed", forKey: "title")
                try context.save()
            }
            try await eventually("A's next connection adds the column back and pushes the title") {
                try? await a.session.synchronize()
                // (An error while the column is missing.)
                return (try? await serverCards("title", as: String.self, on: database)) == ["renamed"]
            }
            // The round on the connection that found the column there failed, saying why.
            let offline = a.seenStates.compactMap { state -> String? in if case .offline(let reason) = state { reason } else { nil } }
            XCTAssertTrue(offline.contains { $0.contains("column t.title does not exist") }, "\(offline)")
            XCTAssertFalse(offline.contains { $0.contains("PostgresTransactionError") }, "the server's message, not a dump: \(offline)")
            XCTAssertEqual(a.session.status.state, .connected)
            XCTAssertEqual(try a.session.conflicts().map(\.details), [], "no desktop wrote the row since A's base")
            XCTAssertEqual(try storedValues(a).titles, ["renamed"], "A keeps its title")

            let c = try SharedStore(folder.appendingPathComponent("c.sqlite"), database: database, model: Self.model)
            try await c.session.synchronize()
            XCTAssertEqual(try c.boardNames(), ["Home"])
            XCTAssertEqual(try storedValues(c).titles, ["renamed"])
            XCTAssertEqual(try storedValues(c).counts, [2])
            XCTAssertEqual(try c.session.rejectedChanges(), [])
            await a.stop()
            await c.stop()
        }
    }

    /// The values of one column of the server's cards, as `type`.
    private func serverCards<T: PostgresDecodable & Sendable>(_ column: String, as type: T.Type, on database: ServerTestDatabase) async throws -> [T?]
        where T._DecodableType == T {
        try await database.withConnection { connection in
            var values: [T?] = []
            for try await value in try await connection.query(PostgresQuery(unsafeSQL: #"SELECT \#(column) FROM "Card""#), logger: ServerTestDatabase.logger).decode(T?.self) {
                values.append(value)
            }
            return values
        }
    }

    /// A value the model refuses, written into a store by another program (the `sqlite3`
    /// shell), is not pushed: it is recorded as not shared, and the server keeps its value.
    func testADesktopNeverPushesAValueItsModelRefuses() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, model: Self.model)
            try a.insertBoard("Home")
            try await a.session.synchronize()
            _ = try sqlite3(a.url, "UPDATE Board SET name = '' WHERE name = 'Home'")
            try await eventually("A refuses to push the empty name") { try !a.session.rejectedChanges().isEmpty }
            let rejected = try a.session.rejectedChanges()
            XCTAssertEqual(rejected.map(\.direction), [.notPushed])
            XCTAssertEqual(rejected.first?.key, "name")
            XCTAssertEqual(rejected.first?.reason, "name must not be empty")
            XCTAssertTrue(rejected.first?.description.contains("not sent to the server") == true, rejected.first?.description ?? "")
            let names = try await database.withConnection { connection in
                var names: [String] = []
                for try await name in try await connection.query(#"SELECT name FROM "Board""#, logger: ServerTestDatabase.logger).decode(String.self) { names.append(name) }
                return names
            }
            XCTAssertEqual(names, ["Home"], "the server keeps its value")
            await a.stop()
        }
    }
}
