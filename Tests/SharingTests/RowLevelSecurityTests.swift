import Foundation
import GRDB
import ObjectStore
import PostgresNIO
@testable import Sharing
import TestSupport
import XCTest

/// Per-row visibility (`Ownership`, row-level security) with the to-do dataset's own model
/// and password roles on the real test server (TLS on, scram-sha-256): a list is seen by
/// its owner, by everyone once shared, and its items follow it.
final class RowLevelSecurityTests: XCTestCase {
    static let model = try! Model(contentsOf: URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("data/todo/model.json"))

    /// Two desktops of two roles, each with a private list and one of them with a shared
    /// list; and a role that may only read. Nothing of the first role's private list (rows,
    /// IDs) reaches the second's store file or what its role reads of the server's log; the
    /// shared list reaches both, and what the second adds to it reaches the first.
    func testPrivateListsStayWithTheirOwnerAndSharedListsReachEveryone() async throws {
        try await ServerTestDatabase.with { database in
            let (a, b, admin) = try await desktops(on: database)
            defer { database.dropRole(a.role); database.dropRole(b.role) }
            try a.store.insertList("Diary of A", shared: false, items: ["Secret plan", "Birthday gift"])
            try a.store.insertList("Team lunch", shared: true, items: ["Book a table"])
            try await a.store.session.synchronize()
            try b.store.insertList("Groceries of B", shared: false, items: ["Oat milk"])
            try await b.store.session.synchronize()
            try await a.store.session.synchronize()

            XCTAssertEqual(try a.store.listTitles(), ["Diary of A", "Team lunch"])
            XCTAssertEqual(try b.store.listTitles(), ["Groceries of B", "Team lunch"])
            XCTAssertEqual(try b.store.itemNames(), ["Book a table", "Oat milk"])
            XCTAssertEqual(try a.store.owners(), ["Diary of A": a.role, "Team lunch": a.role], "the server names the role that inserted each list")
            XCTAssertEqual(try b.store.owners(), ["Groceries of B": b.role, "Team lunch": a.role])

            // Nothing of A's private list in B's store file: no text, no ID (as text or bytes).
            let hidden = try await database.ids(where: #"SELECT l."Z_ID" FROM "List" l WHERE l.title = 'Diary of A' UNION ALL SELECT i."Z_ID" FROM "Item" i JOIN "List" l ON i.list = l."Z_ID" WHERE l.title = 'Diary of A'"#)
            XCTAssertEqual(hidden.count, 3)
            await b.store.stop()
            let file = try b.store.fileBytes()
            for text in ["Diary of A", "Secret plan", "Birthday gift"] + hidden.map({ $0.uuidString.lowercased() }) {
                XCTAssertNil(file.range(of: Data(text.utf8)), "\(text) is in B's store file")
            }
            for id in hidden { XCTAssertNil(file.range(of: id.bytes), "the ID \(id) is in B's store file") }
            // Nor in what B's role may read on the server: the tables and the change log.
            try await database.withConnection { connection in
                try await ServerTestDatabase.execute("SET ROLE \(b.role)", on: connection)
                for table in ["List", "Item", "Z_CHANGES"] {
                    let column = table == "Z_CHANGES" ? "object" : "\"Z_ID\""
                    let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \"\(table)\" WHERE \(column) = ANY($1)",
                                                                        binds: { var binds = PostgresBindings(); binds.append(hidden); return binds }()),
                                                          logger: ServerTestDatabase.logger)
                    for try await count in rows.decode(Int.self) { XCTAssertEqual(count, 0, "\(b.role) reads \(count) rows of A's private list in \(table)") }
                }
            }

            // What B adds to the shared list reaches A.
            let again = try SharedStore(b.store.url, configuration: b.configuration, model: Self.model)
            try again.insertItem("Bring a cake", into: "Team lunch")
            try await again.session.synchronize()
            try await a.store.session.synchronize()
            XCTAssertEqual(try a.store.itemNames(), ["Birthday gift", "Book a table", "Bring a cake", "Secret plan"])

            // A role that may only read sees the shared list, read-only.
            let readerRole = try await database.makeRole(granting: "SELECT", on: ["List", "Item"])
            defer { database.dropRole(readerRole) }
            let reader = try SharedStore(temporaryFolder(self).appendingPathComponent("reader.sqlite"),
                                         configuration: try database.configuration(user: readerRole, password: "\(readerRole)-pass"), model: Self.model)
            try await reader.session.synchronize()
            XCTAssertEqual(try reader.listTitles(), ["Team lunch"])
            XCTAssertEqual(try reader.itemNames(), ["Book a table", "Bring a cake"])
            XCTAssertTrue(reader.session.status.isReadOnly, "\(reader.session.status)")
            for desktop in [reader, again, a.store, admin] { await desktop.stop() }
        }
    }

    /// A list its owner unshares leaves the other desktops with its items (an edit made
    /// there meanwhile is reported as a conflict, not sent); shared again, it comes back.
    func testAnUnsharedListLeavesOtherDesktopsAndComesBackWhenSharedAgain() async throws {
        try await ServerTestDatabase.with { database in
            let (a, b, admin) = try await desktops(on: database)
            defer { database.dropRole(a.role); database.dropRole(b.role) }
            try a.store.insertList("Trip", shared: true, items: ["Tickets", "Passport"])
            try await a.store.session.synchronize()
            try await b.store.session.synchronize()
            XCTAssertEqual(try b.store.itemNames(), ["Passport", "Tickets"])

            // B edits an item while offline; meanwhile A unshares the list.
            await b.store.stop()
            try b.store.renameItem("Tickets", to: "Train tickets")
            try a.store.updateList("Trip") { try $0.setValue(false, forKey: "shared") }
            try await a.store.session.synchronize()
            let back = try SharedStore(b.store.url, configuration: b.configuration, model: Self.model)
            try await back.session.synchronize()
            XCTAssertEqual(try back.listTitles(), [])
            XCTAssertEqual(try back.itemNames(), [])
            let conflicts = try back.session.conflicts()
            XCTAssertEqual(conflicts.map(\.entity), ["Item"], "\(conflicts)")
            XCTAssertTrue(conflicts.first?.details.contains("no longer shared with this desktop's role") == true, "\(conflicts)")
            XCTAssertEqual(back.session.status.pendingChanges, 0)
            let names = try await database.values(of: #"SELECT name FROM "Item" ORDER BY name"#)
            XCTAssertEqual(names, ["Passport", "Tickets"], "the edit of a list B no longer sees did not reach the server")

            try a.store.updateList("Trip") { try $0.setValue(true, forKey: "shared") }
            try await a.store.session.synchronize()
            try await back.session.synchronize()
            XCTAssertEqual(try back.listTitles(), ["Trip"])
            XCTAssertEqual(try back.itemNames(), ["Passport", "Tickets"])
            XCTAssertEqual(try a.store.itemNames(), ["Passport", "Tickets"])
            for desktop in [a.store, back, admin] { await desktop.stop() }
        }
    }

    /// B unshares A's shared list and adds an item to it in one save: the server refuses the
    /// first (only a list's owner may share or unshare it), which is undone in B's store and
    /// reported; the item goes through; B's desktop goes on sharing, not read-only.
    func testAChangeOnlyTheOwnerMayMakeIsRefusedUndoneAndReportedWhileTheRestGoesThrough() async throws {
        try await ServerTestDatabase.with { database in
            let (a, b, admin) = try await desktops(on: database)
            defer { database.dropRole(a.role); database.dropRole(b.role) }
            try a.store.insertList("Team lunch", shared: true, items: ["Book a table"])
            try await a.store.session.synchronize()
            try await b.store.session.synchronize()

            try b.store.updateList("Team lunch") { list in
                try list.setValue(false, forKey: "shared")
                let context = try XCTUnwrap(list.managedObjectContext)
                let item = try context.insert(entityName: "Item")
                try item.setValue("Napkins", forKey: "name")
                try item.setValue(list, forKey: "list")
                // And a new list of B's with an item, sent one by one with the rest: the list
                // must go first, or the server refuses the item (its list unseen) and it is lost.
                let own = try context.insert(entityName: "List")
                try own.setValue("B's errands", forKey: "title")
                let errand = try context.insert(entityName: "Item")
                try errand.setValue("Post office", forKey: "name")
                try errand.setValue(own, forKey: "list")
            }
            try await b.store.session.synchronize()
            let refused = try b.store.session.rejectedChanges()
            XCTAssertEqual(refused.map(\.direction), [.refused], "\(refused)")
            XCTAssertEqual(refused.first?.entity, "List")
            XCTAssertTrue(refused.first?.reason.contains("only its owner (\(a.role)) may share, unshare or give away this List") == true, "\(refused)")
            XCTAssertEqual(try b.store.sharedFlags(), ["Team lunch": true, "B's errands": false], "undone in B's store")
            XCTAssertEqual(try b.store.itemNames(), ["Book a table", "Napkins", "Post office"])
            let onServer = try await database.values(of: #"SELECT name FROM "Item" ORDER BY name"#)
            XCTAssertEqual(onServer, ["Book a table", "Napkins", "Post office"])
            XCTAssertFalse(b.store.session.status.isReadOnly, "\(b.store.session.status)")
            XCTAssertEqual(b.store.session.status.pendingChanges, 0)

            try await a.store.session.synchronize()
            XCTAssertEqual(try a.store.itemNames(), ["Book a table", "Napkins"])
            XCTAssertEqual(try a.store.sharedFlags(), ["Team lunch": true])

            // B deletes its list: its item goes with it on the server too (deleted before the
            // list, or the policy would no longer find it and leave it there, seen by no one).
            let context = b.store.context()
            try context.performAndWait {
                let own = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "List", predicate: try FetchPredicate(format: "title == %@", "B's errands"))).first)
                try context.delete(own)
                try context.save()
            }
            try await b.store.session.synchronize()
            let left = try await database.values(of: #"SELECT name FROM "Item" ORDER BY name"#)
            XCTAssertEqual(left, ["Book a table", "Napkins"], "the item of the list deleted is gone from the server")
            for desktop in [a.store, b.store, admin] { await desktop.stop() }
        }
    }

    /// The schema made by the test's own role (its owner), and a desktop for each of two
    /// new password roles that may write the lists and items.
    private func desktops(on database: ServerTestDatabase) async throws -> (a: Desktop, b: Desktop, admin: SharedStore) {
        let admin = try SharedStore(temporaryFolder(self).appendingPathComponent("admin.sqlite"), database: database, model: Self.model)
        try await admin.session.synchronize()
        let suffix = UInt32.random(in: 0..<UInt32.max)
        var made: [Desktop] = []
        for name in ["owner_a", "owner_b"] {
            let role = try await database.makeRole(named: "\(name)_\(suffix)", granting: "SELECT, INSERT, UPDATE, DELETE", on: ["List", "Item"])
            let configuration = try database.configuration(user: role, password: "\(role)-pass")
            made.append(Desktop(role: role, configuration: configuration,
                                store: try SharedStore(temporaryFolder(self).appendingPathComponent("\(name).sqlite"), configuration: configuration, model: Self.model)))
        }
        return (made[0], made[1], admin)
    }

    private struct Desktop {
        var role: String
        var configuration: ServerConfiguration
        var store: SharedStore
    }
}

extension SharedStore {
    /// Saves a list and its items.
    func insertList(_ title: String, shared: Bool, items: [String]) throws {
        let context = context()
        try context.performAndWait {
            let list = try context.insert(entityName: "List")
            try list.setValue(title, forKey: "title")
            try list.setValue(shared, forKey: "shared")
            for name in items {
                let item = try context.insert(entityName: "Item")
                try item.setValue(name, forKey: "name")
                try item.setValue(list, forKey: "list")
            }
            try context.save()
        }
    }

    /// Changes the list titled `title` with `body`, and saves.
    func updateList(_ title: String, _ body: (ManagedObject) throws -> Void) throws {
        let context = context()
        try context.performAndWait {
            let list = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "List", predicate: try FetchPredicate(format: "title == %@", title))).first)
            try body(list)
            try context.save()
        }
    }

    func insertItem(_ name: String, into title: String) throws {
        try updateList(title) { list in
            let item = try XCTUnwrap(list.managedObjectContext).insert(entityName: "Item")
            try item.setValue(name, forKey: "name")
            try item.setValue(list, forKey: "list")
        }
    }

    func renameItem(_ name: String, to newName: String) throws {
        let context = context()
        try context.performAndWait {
            let item = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Item", predicate: try FetchPredicate(format: "name == %@", name))).first)
            try item.setValue(newName, forKey: "name")
            try context.save()
        }
    }

    func listTitles() throws -> [String] {
        try store.database.read { db in try String.fetchAll(db, sql: #"SELECT title FROM "List" ORDER BY title"#) }
    }

    func itemNames() throws -> [String] {
        try store.database.read { db in try String.fetchAll(db, sql: #"SELECT name FROM "Item" ORDER BY name"#) }
    }

    /// Each list's owner, by title.
    func owners() throws -> [String: String] {
        try store.database.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: #"SELECT title, owner FROM "List""#).map { ($0[0], $0[1] ?? "none") })
        }
    }

    /// Each list's `shared`, by title.
    func sharedFlags() throws -> [String: Bool] {
        try store.database.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: #"SELECT title, shared FROM "List""#).map { ($0[0], $0[1]) })
        }
    }

    /// The bytes of the store's file and its write-ahead log.
    func fileBytes() throws -> Data {
        var bytes = try Data(contentsOf: url)
        for suffix in ["-wal", "-journal"] {
            if let more = try? Data(contentsOf: URL(fileURLWithPath: url.path + suffix)) { bytes += more }
        }
        return bytes
    }
}

extension ServerTestDatabase {
    /// The IDs a query by the test's own role (the schema's owner, whom no policy limits) returns.
    func ids(where sql: String) async throws -> [UUID] {
        try await withConnection { connection in
            var ids: [UUID] = []
            for try await id in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Self.logger).decode(UUID.self) { ids.append(id) }
            return ids
        }
    }

    /// The texts a query by the test's own role returns.
    func values(of sql: String) async throws -> [String] {
        try await withConnection { connection in
            var values: [String] = []
            for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Self.logger).decode(String.self) { values.append(value) }
            return values
        }
    }
}
