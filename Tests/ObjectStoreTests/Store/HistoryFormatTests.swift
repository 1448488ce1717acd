import Foundation
import GRDB
import ObjectStore
import XCTest

/// A store file whose history was recorded by names (the format before "numbered history"),
/// opened by this version: its history is rewritten in numbers, and nothing a reader relies
/// on changes.
final class HistoryFormatTests: XCTestCase {
    /// Another SQLite client on the same file: no ObjectStore, no contexts.
    private func otherClient(_ url: URL) throws -> DatabaseQueue {
        try DatabaseQueue(path: url.path)
    }

    /// A store file of World Cup teams whose history table, triggers and migrations are those
    /// the earlier version made (its statements, word for word), the history's sequence at
    /// `sequence`, with no row recorded yet.
    private func makeFileWithNamedHistory(sequence: Int64) throws -> URL {
        let url = try temporaryFolder(self).appendingPathComponent("named-history.sqlite")
        let store = try PersistentStore(url: url, model: Fixtures.worldCupModel())
        try Fixtures.insertTeams(into: ObjectContext(store: store))
        try store.database.write { db in
            for event in ["insert", "update", "delete", "key"] { try db.execute(sql: "DROP TRIGGER Z_Team_\(event)") }
            try db.execute(sql: "DROP TABLE Z_HISTORY")
            try db.execute(sql: "DROP TABLE Z_ENTITY")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'numbered history'")
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS Z_HISTORY (token INTEGER PRIMARY KEY AUTOINCREMENT, entity TEXT NOT NULL, rowKey INTEGER NOT NULL, kind TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('Z_HISTORY', ?)", arguments: [sequence])
            let record = { (row: String, kind: String) in "INSERT INTO Z_HISTORY (entity, rowKey, kind) VALUES ('Team', \(row).Z_PK, '\(kind)');" }
            for event in ["INSERT", "UPDATE", "DELETE"] {
                try db.execute(sql: "CREATE TRIGGER \"Z_Team_\(event.lowercased())\" AFTER \(event) ON \"Team\" BEGIN \(record(event == "DELETE" ? "OLD" : "NEW", event.lowercased())) END")
            }
            try db.execute(sql: "CREATE TRIGGER \"Z_Team_key\" AFTER UPDATE OF Z_PK ON \"Team\" WHEN OLD.Z_PK IS NOT NEW.Z_PK BEGIN \(record("OLD", "delete")) \(record("NEW", "insert")) END")
        }
        return url
    }

    private func key(_ team: String, _ db: DatabaseQueue) throws -> Int64 {
        try db.read { try Int64.fetchOne($0, sql: "SELECT Z_PK FROM Team WHERE teamName = ?", arguments: [team])! }
    }

    private func kinds(_ url: URL) throws -> [String] {
        try otherClient(url).read { try String.fetchAll($0, sql: "SELECT DISTINCT typeof(kind) FROM Z_HISTORY") }
    }

    func testAHistoryOfNamesIsNumberedKeepingItsTokensAndTheGeneration() throws {
        let url = try makeFileWithNamedHistory(sequence: 100)
        let other = try otherClient(url)
        let ghana = try key("Ghana", other), chile = try key("Chile", other), brazil = try key("Brazil", other)
        try other.write { db in
            try db.execute(sql: "UPDATE Team SET wins = 7 WHERE Z_PK = ?", arguments: [ghana])
            try db.execute(sql: "DELETE FROM Team WHERE Z_PK = ?", arguments: [chile])
            try db.execute(sql: "INSERT INTO Team (teamName, qualifyingZone, wins) VALUES ('Atlantis', 'Oceania', 0)")
            try db.execute(sql: "UPDATE Team SET Z_PK = 1000 WHERE Z_PK = ?", arguments: [brazil])
        }
        XCTAssertEqual(try kinds(url), ["text"], "the earlier version's triggers recorded these changes")
        let atlantis = try key("Atlantis", other)
        // What the earlier version read as the generation and the current token.
        let (generation, token) = try other.read { db in
            (try Int64.fetchOne(db, sql: "SELECT (SELECT CAST(value AS INTEGER) FROM Z_METADATA WHERE key = 'generation') + (SELECT seq FROM sqlite_sequence WHERE name = 'Z_HISTORY')")!,
             try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'Z_HISTORY'")!)
        }
        XCTAssertEqual(token, 106, "an update, a delete, an insert, and a new key: an update, a delete and an insert")

        let store = try PersistentStore(url: url, model: Fixtures.worldCupModel())
        XCTAssertEqual(try kinds(url), ["integer"])
        XCTAssertEqual(try store.generation(), generation, "caches keyed on the generation stay valid")
        XCTAssertEqual(try store.currentHistoryToken(), token)
        let team = { ObjectID(entityName: "Team", rowKey: $0) }
        let (changes, newToken) = try store.changes(since: 100)
        XCTAssertEqual(newToken, token)
        XCTAssertEqual(Set(changes.updated.keys), [team(ghana)])
        XCTAssertEqual(changes.deleted, [team(chile), team(brazil)])
        XCTAssertEqual(changes.inserted, [team(atlantis), team(1000)])
        XCTAssertEqual(try store.changes(since: 101).changes.updated, [:], "every token stays where it was")

        // The new triggers go on from the same sequence, the key's too.
        try other.write { db in
            try db.execute(sql: "UPDATE Team SET wins = 8 WHERE Z_PK = ?", arguments: [ghana])
            try db.execute(sql: "UPDATE Team SET Z_PK = 2000 WHERE Z_PK = 1000")
        }
        XCTAssertEqual(try store.generation(), generation + 4)
        let after = try store.changes(since: token)
        XCTAssertEqual(after.newToken, token + 4)
        XCTAssertEqual(Set(after.changes.updated.keys), [team(ghana)])
        XCTAssertEqual(after.changes.deleted, [team(1000)])
        XCTAssertEqual(after.changes.inserted, [team(2000)])
        let table = try store.database.read { try String.fetchOne($0, sql: "SELECT sql FROM sqlite_master WHERE name = 'Z_HISTORY'")! }
        XCTAssertFalse(table.contains("NOT NULL"), table)
    }

    func testAHistoryPrunedEmptyKeepsItsSequence() throws {
        let url = try makeFileWithNamedHistory(sequence: 100)
        let other = try otherClient(url)
        try other.write { try $0.execute(sql: "UPDATE Team SET wins = 9") }
        let token = 100 + Int64(Fixtures.worldCupTeams.count)
        // The earlier version's pruning of everything: no row left, the sequence above them.
        try other.write { db in
            try db.execute(sql: "DELETE FROM Z_HISTORY WHERE token <= ?", arguments: [token])
            try db.execute(sql: "INSERT OR REPLACE INTO Z_METADATA (key, value) VALUES ('historyPrunedThrough', ?)", arguments: [token])
        }
        let generation = try other.read { try Int64.fetchOne($0, sql: "SELECT CAST(value AS INTEGER) FROM Z_METADATA WHERE key = 'generation'")! } + token

        let store = try PersistentStore(url: url, model: Fixtures.worldCupModel())
        XCTAssertEqual(try store.generation(), generation)
        XCTAssertEqual(try store.currentHistoryToken(), token)
        XCTAssertThrowsError(try store.changes(since: token - 1), "the pruned changes stay pruned")
        try other.write { try $0.execute(sql: "UPDATE Team SET wins = 10 WHERE teamName = 'Ghana'") }
        let (changes, newToken) = try store.changes(since: token)
        XCTAssertEqual(newToken, token + 1, "no token is handed out twice")
        XCTAssertEqual(changes.updated.count, 1)
        XCTAssertEqual(try store.generation(), generation + 1)
    }

    /// A file whose triggers recorded updates without their columns (the format before
    /// "history of changed columns"): those updates read as changing every column, and the
    /// updates after the open name their columns.
    func testUpdatesRecordedBeforeTheirColumnsWereChangedEverywhere() throws {
        let url = try temporaryFolder(self).appendingPathComponent("history-without-columns.sqlite")
        do {
            let store = try PersistentStore(url: url, model: Fixtures.worldCupModel())
            try Fixtures.insertTeams(into: ObjectContext(store: store))
        }
        let other = try otherClient(url)
        try other.write { db in
            // The earlier version's history table and triggers, word for word.
            for event in ["insert", "update", "delete", "key"] { try db.execute(sql: "DROP TRIGGER Z_Team_\(event)") }
            try db.execute(sql: "ALTER TABLE Z_HISTORY DROP COLUMN columns")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'history of changed columns'")
            let number = try Int64.fetchOne(db, sql: "SELECT Z_ENT FROM Z_ENTITY WHERE Z_NAME = 'Team'")!
            let record = { (row: String, kind: Int) in "INSERT INTO Z_HISTORY (entity, rowKey, kind) VALUES (\(number), \(row).Z_PK, \(kind));" }
            for (event, kind) in [("INSERT", 0), ("UPDATE", 1), ("DELETE", 2)] {
                try db.execute(sql: "CREATE TRIGGER \"Z_Team_\(event.lowercased())\" AFTER \(event) ON \"Team\" BEGIN \(record(event == "DELETE" ? "OLD" : "NEW", kind)) END")
            }
            try db.execute(sql: "CREATE TRIGGER \"Z_Team_key\" AFTER UPDATE OF Z_PK ON \"Team\" WHEN OLD.Z_PK IS NOT NEW.Z_PK BEGIN \(record("OLD", 2)) \(record("NEW", 0)) END")
        }
        let ghana = try key("Ghana", other), chile = try key("Chile", other)
        let token = try other.read { try Int64.fetchOne($0, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'Z_HISTORY'")! }
        try other.write { try $0.execute(sql: "UPDATE Team SET wins = 7 WHERE Z_PK = ?", arguments: [ghana]) }

        let store = try PersistentStore(url: url, model: Fixtures.worldCupModel())
        try other.write { try $0.execute(sql: "UPDATE Team SET wins = 8 WHERE Z_PK = ?", arguments: [chile]) }
        let (changes, newToken) = try store.changes(since: token)
        XCTAssertEqual(newToken, token + 2)
        XCTAssertEqual(changes.updated, [ObjectID(entityName: "Team", rowKey: ghana): ["teamName", "qualifyingZone", "imageName", "wins"],
                                         ObjectID(entityName: "Team", rowKey: chile): ["wins"]])
    }
}
