import Foundation
import GRDB
import ObjectStore
@testable import Sharing
import TestSupport
import XCTest

/// A push sends the updates of a pass by entity, in a few statements (one read that locks
/// the rows, one `UPDATE … FROM unnest(…)` for each set of fields changed, an array a column), and its
/// deletes in one: these tests check that it keeps every field-by-field guarantee of the
/// row-by-row push. Edits are generated (`SeededGenerator.seed()`: `SEED`, in CI the fixed
/// one, printed).
final class BulkPushTests: XCTestCase {
    /// An edit made by one desktop while apart: a delete, or new values (in server terms).
    private struct Edit {
        var delete = false
        var values: [String: Value] = [:]
    }

    /// Two desktops edit the same 300 cards while apart, every field type and the board
    /// they are on, to equal or other values, and delete some; A shares first, then B's
    /// push meets A's values (as when A commits between B's pull and B's push).
    /// Each field ends as the policy says: the first committed (A's) under `.error`, the
    /// last pushed (B's) under `.editWins`; a delete on either wins; B reports exactly the
    /// fields both changed to other values, and the edits a delete dropped.
    func testManyEditsOfEveryTypeFromTwoDesktopsMergeFieldByFieldInOnePushEach() async throws {
        let seed = SeededGenerator.seed()
        print("BulkPushTests seed \(seed) (SEED=\(seed) replays it)")
        for policy in [MergePolicy.error, .editWins] {
            var generator = SeededGenerator(seed: seed)
            try await ServerTestDatabase.with { database in try await merge(policy, on: database, generator: &generator) }
        }
    }

    private func merge(_ policy: MergePolicy, on database: ServerTestDatabase, generator: inout SeededGenerator) async throws {
        let folder = try temporaryFolder(self)
        let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, policy: policy, seed: cards(300))
        try await a.session.synchronize()
        let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database, policy: policy)
        try await b.session.synchronize()
        await a.stop()
        await b.stop()
        let original = try a.contents()
        XCTAssertEqual(original, try b.contents())
        let boards = original.filter { $0.value["entity"] == .string("Board") }.keys.sorted()
        let cards = original.filter { $0.value["entity"] == .string("Card") }.keys.sorted()
        var editsOfA: [UUID: Edit] = [:], editsOfB: [UUID: Edit] = [:]
        for card in cards {
            editsOfA[card] = randomEdit(boards: boards, using: &generator)
            editsOfB[card] = randomEdit(boards: boards, using: &generator)
        }
        try apply(editsOfA, to: a, boards: boards)
        try apply(editsOfB, to: b, boards: boards)

        let a2 = try SharedStore(a.url, database: database, policy: policy)
        try await a2.session.synchronize()
        // B's push as a round makes it when A commits between its pull and its push: each of
        // its updates meets A's values on the server, not the bases it read.
        let outbox = Outbox(store: b.store, limits: SharingLimits())
        let operations = try await b.store.database.write { db in try outbox.pending(in: db) }
        let writer = ServerWriter(model: BoardModel.model, policy: policy, logger: ServerTestDatabase.logger)
        let pushed = try await database.withConnection { connection in
            try await connection.withTransaction(logger: ServerTestDatabase.logger) { try await writer.push(operations, on: $0) }
        }
        let b2 = try SharedStore(b.url, database: database, policy: policy)
        try await b2.session.synchronize()
        try await a2.session.synchronize()

        var expected = original
        var expectedConflicts: [UUID: (keys: Set<String>, resolution: SharingConflict.Resolution)] = [:]
        for card in cards {
            let editOfA = editsOfA[card], editOfB = editsOfB[card]
            let was = original[card]!
            let changedByB = Set((editOfB?.values ?? [:]).filter { was[$0.key] != $0.value }.keys)
            if editOfA?.delete == true || editOfB?.delete == true {
                expected[card] = nil
                if editOfA?.delete == true, editOfB?.delete != true, !changedByB.isEmpty { expectedConflicts[card] = (changedByB, .deleted) }
                continue
            }
            var conflicting: Set<String> = []
            for (key, old) in was where key != "entity" {
                let mine = editOfA?.values[key] ?? old, theirs = editOfB?.values[key] ?? old
                if mine != old && theirs != old && mine != theirs { conflicting.insert(key) }
                expected[card]![key] = policy == .editWins ? (theirs != old ? theirs : mine) : (mine != old ? mine : theirs)
            }
            if !conflicting.isEmpty { expectedConflicts[card] = (conflicting, policy == .editWins ? .keptLocal : .tookServer) }
        }
        let server = try await database.contents()
        XCTAssertEqual(server.count, expected.count, "\(policy): the objects left")
        for (id, values) in expected where server[id] != values {
            XCTFail("\(policy): card \(id) is \(server[id].map { "\($0)" } ?? "gone") on the server, expected \(values)")
        }
        XCTAssertEqual(try a2.contents(), server, "\(policy): A equals the server")
        XCTAssertEqual(try b2.contents(), server, "\(policy): B equals the server")
        XCTAssertEqual(try a2.session.conflicts(), [], "\(policy): A pushed first and met no conflict")
        // Kept by the push (`.editWins`), taken from the server by the merge after it
        // (`.error`), or dropped by a delete (the merge).
        if policy == .error { XCTAssertEqual(pushed.conflicts, [], "\(policy): the push wrote over no value A had set") }
        let reported = pushed.conflicts + (try b2.session.conflicts())
        XCTAssertEqual(Set(reported.map(\.globalID)), Set(expectedConflicts.keys), "\(policy): the cards B reports")
        // (Under `.editWins` the merge reports a kept field again: this test's push did not
        // take its rows into B's store, as the engine does, so B's pull merges A's change
        // against the old base. Each report is checked below.)
        if policy == .error { XCTAssertEqual(reported.count, expectedConflicts.count, "\(policy): one conflict a card") }
        for conflict in reported {
            guard let wanted = expectedConflicts[conflict.globalID] else { continue }
            XCTAssertEqual(Set(conflict.keys), wanted.keys, "\(policy): the fields of \(conflict)")
            XCTAssertEqual(conflict.resolution, wanted.resolution, "\(policy): \(conflict)")
        }
        XCTAssertGreaterThan(expectedConflicts.count, 20, "the edits made conflicts to check")
        await a2.stop()
        await b2.stop()
    }

    /// A push's end takes each row the server holds as sent (most of a busy desktop's
    /// updates) as its base alone, and merges the others field by field: an edit made
    /// between the push's read and its end stays an edit, and goes out with the next push;
    /// a field another desktop changed before the push is taken; nothing is a conflict; every
    /// pushed object's base is the server's row. Edits generated (`SEED`).
    func testAPushsEndKeepsEditsMadeSinceAndTakesFieldsOtherDesktopsChanged() async throws {
        let seed = SeededGenerator.seed()
        print("BulkPushTests seed \(seed) (SEED=\(seed) replays it)")
        var generator = SeededGenerator(seed: seed)
        try await ServerTestDatabase.with { database in
            let (a, b) = try await desktopsApart(cards: 200, on: database)
            let original = try a.contents()
            let boards = original.filter { $0.value["entity"] == .string("Board") }.keys.sorted()
            let cards = original.filter { $0.value["entity"] == .string("Card") }.keys.sorted()
            // B retitles a quarter of the cards, on the server before A pushes.
            var titlesOfB: [UUID: Edit] = [:]
            for card in cards where Int.random(in: 0..<4, using: &generator) == 0 {
                titlesOfB[card] = Edit(values: ["title": .string("B's \(card.uuidString.prefix(8))")])
            }
            try apply(titlesOfB, to: b, boards: boards)
            try await b.session.synchronize()
            // A edits the other fields of most cards, and pushes them.
            var editsOfA: [UUID: Edit] = [:]
            for card in cards {
                guard var edit = randomEdit(boards: boards, using: &generator), !edit.delete else { continue }
                // (Only the fields it changes: an edit to the value a field has is no change.)
                edit.values = edit.values.filter { $0.key != "title" && original[card]?[$0.key] != $0.value }
                if !edit.values.isEmpty { editsOfA[card] = edit }
            }
            try apply(editsOfA, to: a, boards: boards)
            let outbox = Outbox(store: a.store, limits: SharingLimits())
            let operations = try await a.store.database.write { db in try outbox.pending(in: db) }
            XCTAssertEqual(Set(operations.map(\.id)), Set(editsOfA.keys), "A pushes the cards it edited")
            let writer = ServerWriter(model: BoardModel.model, policy: .error, logger: ServerTestDatabase.logger)
            let pushed = try await database.withConnection { connection in
                try await connection.withTransaction(logger: ServerTestDatabase.logger) { try await writer.push(operations, on: $0) }
            }
            XCTAssertEqual(pushed.conflicts, [], "A's push wrote over no field B changed")
            // Before the push's end is taken, A edits a third of those cards again: a count,
            // or a delete.
            var laterOfA: [UUID: Edit] = [:]
            for card in editsOfA.keys.sorted() where Int.random(in: 0..<3, using: &generator) == 0 {
                laterOfA[card] = Int.random(in: 0..<4, using: &generator) == 0 ? Edit(delete: true)
                    : Edit(values: ["count": .integer(Int64.random(in: 100..<200, using: &generator))])
            }
            try apply(laterOfA, to: a, boards: boards)
            let engine = SharingEngine(store: a.store, sharing: PostgresSharing(database.configuration))
            try await a.store.database.write { db in
                try engine.takeWritten(pushed.written, sent: operations, conflicts: pushed.conflicts, in: db)
            }

            let serverAfterPush = try await database.contents()
            let card = try XCTUnwrap(BoardModel.model.entity(named: "Card"))
            try await a.store.database.read { db in
                for row in pushed.written {
                    let base = try SharingState.base(of: row.id, entity: card, model: BoardModel.model, in: db)
                    XCTAssertEqual(base?.version, row.version, "card \(row.id): its base is at the server's version")
                    XCTAssertEqual(base?.values.map { $0.merging(["entity": .string("Card")]) { $1 } }, serverAfterPush[row.id],
                                   "card \(row.id): its base is the server's row")
                }
            }
            // A holds B's titles of the cards it pushed, its own edits, and the later ones over them.
            var expected = original
            func edit(_ edits: [UUID: Edit], where include: (UUID) -> Bool = { _ in true }) {
                for (id, edit) in edits where include(id) {
                    if edit.delete { expected[id] = nil } else { expected[id]?.merge(edit.values) { $1 } }
                }
            }
            edit(titlesOfB) { editsOfA[$0] != nil }
            edit(editsOfA)
            edit(laterOfA)
            let taken = try a.contents()
            for (id, values) in expected where taken[id] != values {
                XCTFail("card \(id) is \(taken[id].map { "\($0)" } ?? "gone") in A after its push's end, expected \(values)")
            }
            XCTAssertEqual(taken.count, expected.count, "A's objects after its push's end")

            // The later edits go out with A's next push; B takes them, and A takes B's other titles.
            let a2 = try SharedStore(a.url, database: database)
            try await a2.session.synchronize()
            try await b.session.synchronize()
            edit(titlesOfB)
            let server = try await database.contents()
            XCTAssertEqual(server, expected, "the server holds every edit")
            XCTAssertEqual(try a2.contents(), server, "A equals the server")
            XCTAssertEqual(try b.contents(), server, "B equals the server")
            XCTAssertEqual(try a2.session.conflicts(), [], "A met no conflict")
            XCTAssertEqual(try b.session.conflicts(), [], "B met no conflict")
            XCTAssertGreaterThan(laterOfA.count, 10, "edits were made between the push and its end")
            await a2.stop()
            await b.stop()
        }
    }

    /// A push of inserts some of which the server has already (a piece committed there
    /// whose end the store never took: the process was killed in between) gives back every
    /// object's row: those it inserted, and the server's rows of the others, read again.
    func testInsertsTheServerHasAlreadyComeBackAsTheServersRows() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, seed: cards(40))
            try await a.session.synchronize()
            await a.stop()
            // The ends lost: the store holds no base, so every object goes again as an insert;
            // and two boards are new.
            try await a.store.database.write { db in try db.execute(sql: "DELETE FROM \(SharingState.baseTable)") }
            try a.insertBoard("New 1")
            try a.insertBoard("New 2")
            let outbox = Outbox(store: a.store, limits: SharingLimits())
            let operations = try await a.store.database.write { db in try outbox.pending(everything: true, in: db) }
            XCTAssertEqual(operations.count, 4 + 40 + 2, "every object is to be sent")
            XCTAssertTrue(operations.allSatisfy { $0.kind == .insert }, "as inserts")
            let writer = ServerWriter(model: BoardModel.model, policy: .error, logger: ServerTestDatabase.logger)
            let written = try await database.withConnection { connection in
                try await connection.withTransaction(logger: ServerTestDatabase.logger) { try await writer.push(operations, on: $0).written }
            }
            XCTAssertEqual(written.count, operations.count, "one row an object")
            XCTAssertEqual(Set(written.map(\.id)), Set(operations.map(\.id)), "every object's row came back")
            let server = try await database.contents()
            XCTAssertEqual(server.count, operations.count, "the new boards are on the server, nothing twice")
            for row in written {
                var values = row.values ?? [:]
                values["entity"] = .string(row.entity)
                XCTAssertEqual(values, server[row.id], "\(row.entity) \(row.id) came back as the server holds it")
                XCTAssertEqual(row.version, 1, "\(row.entity) \(row.id): at the version the server gave it")
            }
        }
    }

    /// An entity's inserts go in one statement, an array a column (``ColumnArray``):
    /// every value of every type, NULLs among them, reaches the server as sent; objects the
    /// server has already come back as the server's rows, left as they were. A value its
    /// column cannot hold fails the push, naming the object and field, and leaves the
    /// server as it was.
    func testInsertsGoAsArraysOfEveryTypeAndNull() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, seed: cards(30))
            try await a.session.synchronize()
            await a.stop()
            let before = try await database.contents()
            // The ends lost (no bases: every object goes again as an insert), and 45 new cards.
            try await a.store.database.write { db in try db.execute(sql: "DELETE FROM \(SharingState.baseTable)") }
            let context = a.context()
            try context.performAndWait {
                let boards = try context.fetch(FetchRequest<ManagedObject>(entityName: "Board"))
                for index in 0..<45 { try self.insertCard(index, on: boards[index % boards.count], in: context) }
                try context.save()
            }
            let outbox = Outbox(store: a.store, limits: SharingLimits())
            let operations = try await a.store.database.write { db in try outbox.pending(everything: true, in: db) }
                .filter { $0.entity.name == "Card" }
            XCTAssertEqual(operations.count, 30 + 45, "every card is to be sent")
            let writer = ServerWriter(model: BoardModel.model, policy: .error, logger: ServerTestDatabase.logger)
            let push = { (operations: [Outbox.Operation]) in
                try await database.withConnection { connection in
                    try await connection.withTransaction(logger: ServerTestDatabase.logger) { try await writer.push(operations, on: $0).written }
                }
            }
            let written = try await push(operations)

            XCTAssertEqual(written.count, operations.count, "one row an object")
            let server = try await database.contents()
            XCTAssertEqual(server.count, before.count + 45, "the new cards are on the server, nothing twice")
            let sent = Dictionary(uniqueKeysWithValues: operations.map { ($0.id, $0) })
            for row in written {
                var values = row.values ?? [:]
                values["entity"] = .string(row.entity)
                XCTAssertEqual(values, server[row.id], "card \(row.id) came back as the server holds it")
                if before[row.id] == nil {
                    XCTAssertEqual(row.values, sent[row.id]?.values, "new card \(row.id): the server holds what was sent")
                    XCTAssertEqual(row.version, 1, "new card \(row.id): at the version the server gave it")
                } else {
                    XCTAssertEqual(values, before[row.id], "card \(row.id) was on the server already, and is left as it was")
                }
            }
            for key in ["score", "due", "photo"] {
                XCTAssertTrue(written.contains { $0.values?[key] == .null }, "a NULL \(key) was sent")
                XCTAssertTrue(written.contains { $0.values?[key].map { !$0.isNull } ?? false }, "a \(key) was sent")
            }

            // A count that is not a number (written into the file by another program).
            var bad = operations.filter { before[$0.id] == nil }
            for index in bad.indices { bad[index].id = UUID() }
            bad[3].values["count"] = .string("seven")
            do {
                _ = try await push(bad)
                XCTFail("a string in an integer column is sent")
            } catch {
                // (The transaction's error holds the push's.)
                let message = "\(error)"
                XCTAssertTrue(message.contains("Card \(bad[3].id.uuidString.lowercased())'s count holds"), message)
                XCTAssertTrue(message.contains("bigint"), message)
            }
            let after = try await database.contents()
            XCTAssertEqual(after, server, "nothing of the failed push is on the server")
        }
    }

    /// A desktop that takes in others' changes does not read those rows again to find what
    /// to push (they hold the server's values): its push compares only the objects edited
    /// here, an object both edited here and taken in among them, and the edit goes out.
    func testAPushComparesTheObjectsEditedHereNotTheRowsTheDesktopTookIn() async throws {
        try await ServerTestDatabase.with { database in
            let (a, b) = try await desktopsApart(cards: 100, on: database)
            // B retitles 60 cards; A, offline, ticks or unticks one of them and one other card.
            let retitled = try await b.store.database.write { db in
                try db.execute(sql: "UPDATE Card SET title = 'B ' || title WHERE Z_PK <= 60")
                return try Int64.fetchAll(db, sql: "SELECT Z_PK FROM Card WHERE Z_PK <= 60").count
            }
            XCTAssertEqual(retitled, 60)
            try await b.session.synchronize()
            try await a.store.database.write { db in try db.execute(sql: "UPDATE Card SET done = NOT done WHERE Z_PK IN (1, 80)") }
            // A's first round takes B's 60 cards in, then pushes.
            let again = try a.store.share(through: PostgresSharing(database.configuration))
            try await again.synchronize()
            let scanned = await again.objectsScanned()
            XCTAssertEqual(scanned, 2, "A's push compared the two cards edited here, not the 60 it took in")
            try await b.session.synchronize()
            let server = try await database.contents()
            XCTAssertEqual(try a.contents(), server)
            XCTAssertEqual(try b.contents(), server)
            let local = try await a.store.database.read { db in
                try Row.fetchAll(db, sql: "SELECT Z_PK, title, done FROM Card WHERE Z_PK IN (1, 2, 80) ORDER BY Z_PK").map { "\($0[0] as Int64) \($0[1] as String) \($0[2] as Bool)" }
            }
            XCTAssertEqual(local, ["1 B t0 false", "2 B t1 false", "80 t4 true"], "both desktops' edits of card 1, B's of 2, A's of 80")
            await again.stop()
            await b.stop()
        }
    }

    /// Desktop A seeded with `count` cards (``cards(_:)``) and sharing them, B joined to
    /// it, and A stopped: two desktops with the same cards, B still sharing.
    private func desktopsApart(cards count: Int, on database: ServerTestDatabase) async throws -> (a: SharedStore, b: SharedStore) {
        let folder = try temporaryFolder(self)
        let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, seed: cards(count))
        try await a.session.synchronize()
        let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
        try await b.session.synchronize()
        await a.stop()
        return (a, b)
    }

    /// `count` cards on four boards, their values varied.
    private func cards(_ count: Int) -> (ObjectContext) throws -> Void {
        { context in
            let boards = try (0..<4).map { index in
                let board = try context.insert(entityName: "Board")
                try board.setValue("Board \(index)", forKey: "name")
                return board
            }
            for index in 0..<count { try self.insertCard(index, on: boards[index % 4], in: context) }
        }
    }

    /// Inserts card number `index` on `board`, its values varied by `index` (NULLs among them).
    private func insertCard(_ index: Int, on board: ManagedObject, in context: ObjectContext) throws {
        let card = try context.insert(entityName: "Card")
        try card.setValue("t\(index % 5)", forKey: "title")
        try card.setValue(index % 5, forKey: "count")
        try card.setValue(index % 3 == 0 ? nil : Double(index % 8) / 4, forKey: "score")
        try card.setValue(index % 2 == 0, forKey: "done")
        try card.setValue(index % 4 == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(index % 4) * 86_400), forKey: "due")
        try card.setValue(index % 3 == 1 ? nil : Data([UInt8(index % 3)]), forKey: "photo")
        try card.setValue(board, forKey: "board")
    }

    /// Nothing (a third of the cards), a delete (one in ten), or new values for some fields,
    /// drawn from few values so that both desktops often set the same one.
    private func randomEdit(boards: [UUID], using generator: inout SeededGenerator) -> Edit? {
        let roll = Int.random(in: 0..<30, using: &generator)
        if roll < 10 { return nil }
        if roll < 13 { return Edit(delete: true) }
        var edit = Edit()
        for key in ["board", "count", "done", "due", "photo", "score", "title"] where Int.random(in: 0..<3, using: &generator) == 0 {
            let pick = Int.random(in: 0..<8, using: &generator), none = Bool.random(using: &generator)
            switch key {
            case "title": edit.values[key] = .string("t\(pick % 5)")
            case "count": edit.values[key] = .integer(Int64(pick % 5))
            case "score": edit.values[key] = none ? .null : .double(Double(pick) / 4)
            case "done": edit.values[key] = .bool(none)
            case "due": edit.values[key] = none ? .null : .date(Date(timeIntervalSinceReferenceDate: Double(pick % 4) * 86_400))
            case "photo": edit.values[key] = none ? .null : .binary(Data([UInt8(pick % 3)]))
            default: edit.values[key] = .string(boards[pick % boards.count].uuidString.lowercased())
            }
        }
        return edit.values.isEmpty ? nil : edit
    }

    /// Saves `edits` in `desktop`'s store, in one save, while it does not share.
    private func apply(_ edits: [UUID: Edit], to desktop: SharedStore, boards: [UUID]) throws {
        let objectIDs = try desktop.store.database.read { db in
            try Dictionary(uniqueKeysWithValues: (Array(edits.keys) + boards).compactMap { id in
                try GlobalIDs.object(for: id, in: db).map { (id, $0) }
            })
        }
        let context = desktop.context()
        try context.performAndWait {
            for (id, edit) in edits.sorted(by: { $0.key < $1.key }) {
                let card = try context.existingObject(with: objectIDs[id]!)
                if edit.delete {
                    try context.delete(card)
                    continue
                }
                for (key, value) in edit.values.sorted(by: { $0.key < $1.key }) {
                    switch value {
                    case .null: try card.setValue(nil, forKey: key)
                    case .string(let text) where key == "board": try card.setValue(try context.existingObject(with: objectIDs[UUID(uuidString: text)!]!), forKey: key)
                    case .string(let text): try card.setValue(text, forKey: key)
                    case .integer(let number): try card.setValue(number, forKey: key)
                    case .double(let number): try card.setValue(number, forKey: key)
                    case .bool(let flag): try card.setValue(flag, forKey: key)
                    case .date(let date): try card.setValue(date, forKey: key)
                    case .binary(let data): try card.setValue(data, forKey: key)
                    }
                }
            }
            try context.save()
        }
    }
}
