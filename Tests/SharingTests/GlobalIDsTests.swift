import Foundation
import ObjectStore
@testable import Sharing
import TestSupport
import XCTest

final class GlobalIDsTests: XCTestCase {
    /// IDs given one after another sort one after another, as bytes (the store's tables)
    /// and as PostgreSQL orders `uuid` (byte by byte), even many in one millisecond; they
    /// are version 7 UUIDs, each unique, each with random bits of its own.
    func testNewIDsAreTimeOrderedVersion7UUIDsAndUnique() {
        let ids = (0..<100_000).map { _ in GlobalIDs.newGlobalID() }
        let bytes = ids.map { Array($0.bytes) }
        XCTAssertTrue(zip(bytes, bytes.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }, "each after the one before")
        XCTAssertEqual(Set(ids).count, ids.count)
        // Unique by their random bits alone too (62 of them: two IDs of two desktops in one
        // millisecond, at one count, differ there), not only by their time and counter.
        XCTAssertEqual(Set(bytes.map { $0.suffix(8) }).count, ids.count, "random tails")
        for id in ids.prefix(1_000) {
            let text = id.uuidString
            XCTAssertEqual(text[text.index(text.startIndex, offsetBy: 14)], "7", text)
            XCTAssertTrue("89AB".contains(text[text.index(text.startIndex, offsetBy: 19)]), text)
        }
        let milliseconds = bytes[0].prefix(6).reduce(0) { $0 << 8 | UInt64($1) }
        XCTAssertLessThan(abs(Double(milliseconds) / 1000 - Date().timeIntervalSince1970), 60, "the time it was given")
    }

    func testAnExistingStoreGetsAnIDForEveryRowThatStaysAcrossInstallsAndOpens() throws {
        let url = try temporaryFolder(self).appendingPathComponent("boards.sqlite")
        var ids: [ObjectID] = []
        do {
            let store = try PersistentStore(url: url, model: BoardModel.model)
            let context = ObjectContext(store: store)
            for name in ["Home", "Work", "Garden"] {
                try context.insert(entityName: "Board").setValue(name, forKey: "name")
            }
            try context.save()
            ids = try context.fetch(FetchRequest<ManagedObject>(entityName: "Board", sortDescriptors: [FetchSortDescriptor(key: "name")])).map(\.objectID)
            let token = try store.currentHistoryToken()
            try GlobalIDs(store: store).install()
            XCTAssertEqual(try store.currentHistoryToken(), token, "giving IDs records no change in the history")
        }
        let store = try PersistentStore(url: url, model: BoardModel.model)
        let globalIDs = GlobalIDs(store: store)
        let first = try ids.map { try XCTUnwrap(globalIDs.globalID(of: $0)) }
        XCTAssertEqual(Set(first).count, 3)
        try globalIDs.install()
        XCTAssertEqual(try ids.map { try globalIDs.globalID(of: $0) }, first, "an ID once given stays")
        XCTAssertEqual(try first.map { try globalIDs.objectID(for: $0) }, ids)
        XCTAssertNil(try globalIDs.objectID(for: UUID()))
    }

    func testObjectsSavedLaterByAnyWriterGetOneWhenNamedAndADeletedObjectKeepsIt() throws {
        let url = try temporaryFolder(self).appendingPathComponent("boards.sqlite")
        let store = try PersistentStore(url: url, model: BoardModel.model)
        let globalIDs = GlobalIDs(store: store)
        try globalIDs.install()
        let context = ObjectContext(store: store)
        let board = try context.insert(entityName: "Board")
        try board.setValue("Home", forKey: "name")
        XCTAssertEqual(try globalIDs.assignGlobalIDs(to: [board.objectID]), [:], "an unsaved object gets none")
        try context.save()
        try sqlite3(url, #"INSERT INTO Board (name) VALUES ('from the shell')"#)
        let fromShell = ObjectID(entityName: "Board", rowKey: try XCTUnwrap(Int64(try sqlite3(url, "SELECT max(Z_PK) FROM Board"))))
        XCTAssertNil(try globalIDs.globalID(of: fromShell), "none until it is named")

        let token = try store.currentHistoryToken()
        let gone = ObjectID(entityName: "Board", rowKey: 999)
        let ids = try globalIDs.assignGlobalIDs(to: [board.objectID, fromShell, gone])
        XCTAssertEqual(Set(ids.keys), [board.objectID, fromShell], "an object that is not saved gets none")
        XCTAssertEqual(Set(ids.values).count, 2)
        XCTAssertEqual(try globalIDs.assignGlobalIDs(to: [board.objectID, fromShell]), ids, "an ID once given stays")
        XCTAssertEqual(try store.currentHistoryToken(), token, "giving IDs records no change in the history")

        try context.delete(board)
        try context.save()
        XCTAssertEqual(try globalIDs.globalID(of: board.objectID), ids[board.objectID], "a delete can still be named when it is pushed")
        XCTAssertEqual(try globalIDs.objectID(for: XCTUnwrap(ids[fromShell])), fromShell)
    }

    func testTheObjectsOfAnEntityAddedByAMigrationGetIDsOnTheNextInstall() throws {
        let url = try temporaryFolder(self).appendingPathComponent("notes.sqlite")
        let note = EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)])
        let tag = EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)])
        try GlobalIDs(store: PersistentStore(url: url, model: Model(entities: [note]))).install()
        let store = try PersistentStore(url: url, model: Model(entities: [note, tag]))
        let context = ObjectContext(store: store)
        let object = try context.insert(entityName: "Tag")
        try object.setValue("urgent", forKey: "label")
        try context.save()
        try GlobalIDs(store: store).install()
        XCTAssertNotNil(try GlobalIDs(store: store).globalID(of: object.objectID))
    }
}
