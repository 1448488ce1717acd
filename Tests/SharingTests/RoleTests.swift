import Foundation
import ObjectStore
import PostgresNIO
@testable import Sharing
import TestSupport
import XCTest

/// Password roles on the real test server (scripts/with-postgres: members of
/// `password_users` log in with scram-sha-256): a role that may only read, and a role whose
/// writes the server refuses.
final class RoleTests: XCTestCase {
    /// A role granted SELECT only: its desktop takes the list and what others add later, says
    /// "read-only", and keeps its own edits in its store without sending them or failing.
    func testARoleThatMayOnlyReadTakesTheListKeepsItsOwnEditsAndSaysReadOnly() async throws {
        try await ServerTestDatabase.with { database in
            let owner = try SharedStore(temporaryFolder(self).appendingPathComponent("owner.sqlite"), database: database)
            try owner.insertBoard("Shared")
            try await owner.session.synchronize()
            let reader = try await database.makeRole(granting: "SELECT")
            defer { database.dropRole(reader) }

            let lines = LogLines()
            let desktop = try SharedStore(temporaryFolder(self).appendingPathComponent("reader.sqlite"),
                                          configuration: try database.configuration(user: reader, password: "\(reader)-pass"), logLines: lines)
            try await desktop.session.synchronize()
            XCTAssertEqual(try desktop.boardNames(), ["Shared"])
            XCTAssertTrue(desktop.session.status.isReadOnly)
            XCTAssertEqual(desktop.session.status.readOnlyReason, "\(reader) may only read the shared list on this server")
            XCTAssertTrue("\(desktop.session.status)".contains("read-only"), "\(desktop.session.status)")

            try desktop.insertBoard("Made by the reader")
            try await desktop.session.synchronize()
            try await desktop.session.synchronize()
            XCTAssertEqual(try desktop.boardNames(), ["Made by the reader", "Shared"], "its own edit stays in its store")
            XCTAssertEqual(desktop.session.status.pendingChanges, 1)
            XCTAssertEqual(desktop.session.status.state, .connected)

            try owner.insertBoard("Later")
            try await owner.session.synchronize()
            try await desktop.session.synchronize()
            XCTAssertEqual(try desktop.boardNames(), ["Later", "Made by the reader", "Shared"], "what others add still arrives")
            let names = try await database.contents().values.compactMap { $0["name"] }
            XCTAssertEqual(Set(names), [.string("Shared"), .string("Later")], "nothing of the reader's reached the server")
            XCTAssertEqual(lines.all.filter { $0.contains("may only read") }.count, 1, "said once: \(lines.all)")
            await desktop.stop()
            await owner.stop()
        }
    }

    /// A role granted writes on the entity tables only (no right on the change log, which
    /// only the schema owner's trigger writes): its desktop shares both ways, and its boards
    /// reach the owner's desktop, logged under its name by the owner's trigger.
    func testARoleThatWritesTheEntityTablesOnlySharesBothWays() async throws {
        try await ServerTestDatabase.with { database in
            let owner = try SharedStore(temporaryFolder(self).appendingPathComponent("owner.sqlite"), database: database)
            try owner.insertBoard("From the owner")
            try await owner.session.synchronize()
            let writer = try await database.makeRole(granting: "SELECT, INSERT, UPDATE, DELETE")
            defer { database.dropRole(writer) }
            let desktop = try SharedStore(temporaryFolder(self).appendingPathComponent("writer.sqlite"),
                                          configuration: try database.configuration(user: writer, password: "\(writer)-pass"))
            try desktop.insertBoard("From the writer")
            try await desktop.session.synchronize()
            XCTAssertFalse(desktop.session.status.isReadOnly, "\(desktop.session.status)")
            XCTAssertEqual(desktop.session.status.pendingChanges, 0)
            try await owner.session.synchronize()
            XCTAssertEqual(try owner.boardNames(), ["From the owner", "From the writer"])
            XCTAssertEqual(try desktop.boardNames(), ["From the owner", "From the writer"])
            // The log is not the writer's to write: a forged entry is refused.
            try await database.withConnection { connection in
                try await ServerTestDatabase.execute("SET ROLE \(writer)", on: connection)
                do {
                    try await ServerTestDatabase.execute(#"INSERT INTO "Z_CHANGES" (entity, object, op, version) VALUES ('Board', gen_random_uuid(), 'delete', 1)"#, on: connection)
                    XCTFail("the writer wrote the change log")
                } catch let error as PSQLError {
                    XCTAssertEqual(error.serverInfo?[.sqlState], "42501")
                }
            }
            await desktop.stop()
            await owner.stop()
        }
    }

    /// A desktop of a newer model (a new attribute) whose role does not own the schema: it
    /// cannot add the column, and says who can ("the owner's desktop must connect once with
    /// this version"); once the owner's desktop of that version has, it shares, and the older
    /// version's desktops still connect.
    func testANewerModelNeedsTheSchemaOwnerOnceAndThenEveryRoleShares() async throws {
        try await ServerTestDatabase.with { database in
            let owner = try SharedStore(temporaryFolder(self).appendingPathComponent("owner.sqlite"), database: database)
            try await owner.session.synchronize()
            let writer = try await database.makeRole(granting: "SELECT, INSERT, UPDATE, DELETE")
            defer { database.dropRole(writer) }
            var entities = BoardModel.model.entities
            entities[0].attributes.append(AttributeDescription(name: "colour", type: .string, isOptional: true))
            let newer = try Model(entities: entities)
            let desktop = try SharedStore(temporaryFolder(self).appendingPathComponent("writer.sqlite"),
                                          configuration: try database.configuration(user: writer, password: "\(writer)-pass"), model: newer)
            do {
                try await desktop.session.synchronize()
                XCTFail("a role that does not own the schema changed it")
            } catch let error as SharingError {
                XCTAssertEqual(error.kind, .permissionDenied)
                XCTAssertTrue("\(error)".contains("the owner's desktop must connect once with this version"), "\(error)")
            }
            await desktop.stop()

            let newerOwner = try SharedStore(temporaryFolder(self).appendingPathComponent("owner2.sqlite"), database: database, model: newer)
            try await newerOwner.session.synchronize()
            await newerOwner.stop()
            let again = try SharedStore(desktop.url, configuration: try database.configuration(user: writer, password: "\(writer)-pass"), model: newer)
            try again.insertBoard("In colour")
            try await again.session.synchronize()
            try await owner.session.synchronize()
            XCTAssertEqual(try owner.boardNames(), ["In colour"], "the older model's desktop still shares")
            await again.stop()
            await owner.stop()
        }
    }

    /// A role that may write the tables, but whose new rows row-level security refuses: the
    /// refusal is reported once, as such; its changes stay in the store, pending; rounds go on
    /// pulling instead of failing every time.
    func testAPushTheServerRefusesForPermissionIsReportedOnceAndItsChangesKept() async throws {
        try await ServerTestDatabase.with { database in
            let owner = try SharedStore(temporaryFolder(self).appendingPathComponent("owner.sqlite"), database: database)
            try await owner.session.synchronize()
            let writer = try await database.makeRole(granting: "SELECT, INSERT, UPDATE, DELETE")
            defer { database.dropRole(writer) }
            try await database.withConnection { connection in
                try await ServerTestDatabase.execute(#"ALTER TABLE "Board" ENABLE ROW LEVEL SECURITY"#, on: connection)
                try await ServerTestDatabase.execute(#"CREATE POLICY everyone_reads ON "Board" FOR SELECT USING (true)"#, on: connection)
            }

            let lines = LogLines()
            let desktop = try SharedStore(temporaryFolder(self).appendingPathComponent("writer.sqlite"),
                                          configuration: try database.configuration(user: writer, password: "\(writer)-pass"), logLines: lines)
            try await desktop.session.synchronize()
            XCTAssertFalse(desktop.session.status.isReadOnly, "the role may write the tables")
            try desktop.insertBoard("Refused")
            for _ in 0..<3 { try await desktop.session.synchronize() }
            let status = desktop.session.status
            XCTAssertEqual(status.state, .connected)
            XCTAssertEqual(status.pendingChanges, 1)
            XCTAssertTrue(status.readOnlyReason?.contains("row-level security") == true, "\(status)")
            XCTAssertEqual(try desktop.boardNames(), ["Refused"], "kept in the store")
            XCTAssertEqual(lines.all.filter { $0.contains("refused this desktop's changes") }.count, 1, "said once: \(lines.all)")

            try owner.insertBoard("From the owner")
            try await owner.session.synchronize()
            try await desktop.session.synchronize()
            XCTAssertEqual(try desktop.boardNames(), ["From the owner", "Refused"], "pulls go on")
            await desktop.stop()
            await owner.stop()
        }
    }
}

extension ServerTestDatabase {
    /// A new role that logs in with the password "NAME-pass" (scram-sha-256, as a member of
    /// `password_users`), granted as Docs/Sharing.md says: SELECT on every table, and
    /// `privileges` on the entity tables (with INSERT on the counters' pushes when it writes).
    func makeRole(named name: String? = nil, granting privileges: String, on tables: [String] = ["Board", "Card"]) async throws -> String {
        let role = name ?? "role_\(UInt32.random(in: 0..<UInt32.max))"
        let writes = privileges.contains("INSERT")
        try await withConnection { connection in
            for sql in ["CREATE ROLE \(role) LOGIN PASSWORD '\(role)-pass' IN ROLE password_users",
                        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)",
                        "GRANT \(privileges) ON \(tables.map { "\"\($0)\"" }.joined(separator: ", ")) TO \(role)"]
                + (writes ? [#"GRANT INSERT ON "Z_PUSHES" TO \#(role)"#] : []) {
                try await Self.execute(sql, on: connection)
            }
        }
        return role
    }

    /// Drops `role` and what it was granted, later (what it owns goes to the test's own user).
    func dropRole(_ role: String) {
        let database = self
        Task {
            try? await database.withConnection { connection in
                try await Self.execute("REASSIGN OWNED BY \(role) TO CURRENT_USER", on: connection)
                try await Self.execute("DROP OWNED BY \(role)", on: connection)
                try await Self.execute("DROP ROLE IF EXISTS \(role)", on: connection)
            }
        }
    }
}
