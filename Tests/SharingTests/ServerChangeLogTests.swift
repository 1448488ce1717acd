import Foundation
import ObjectStore
import PostgresNIO
import Sharing
import TestSupport
import XCTest

final class ServerChangeLogTests: XCTestCase {
    private let logger = ServerTestDatabase.logger
    private let log = ServerChangeLog(model: BoardModel.model)

    /// The reason for the commit-safe cursor: a change whose transaction commits after a
    /// later-numbered one is skipped by `seq > cursor`, and found by the pull.
    func testASequenceCursorSkipsAChangeThatCommitsLateAndThePullDoesNot() async throws {
        try await withSchema { database, puller in
            try await database.withConnection { late in
                try await database.withConnection { early in
                    var sequenceCursor: Int64 = 0
                    var seenBySequence: [String] = []
                    func pullBySequence() async throws {
                        let rows = try await puller.query(#"SELECT seq, "row"->>'name' FROM "Z_CHANGES" WHERE seq > \#(sequenceCursor) ORDER BY seq"#, logger: self.logger)
                        for try await (seq, name) in rows.decode((Int64, String).self) {
                            sequenceCursor = seq
                            seenBySequence.append(name)
                        }
                    }
                    try await ServerTestDatabase.execute("BEGIN", on: late)
                    try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), 'late')"#, on: late)
                    try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), 'early')"#, on: early)

                    try await pullBySequence()
                    var page = try await self.log.pull(after: .start, on: puller, logger: self.logger)
                    XCTAssertEqual(page.changes, [], "'early' waits while an older transaction runs")
                    XCTAssertEqual(page.cursor, .start)

                    try await ServerTestDatabase.execute("COMMIT", on: late)
                    try await pullBySequence()
                    page = try await self.log.pull(after: page.cursor, on: puller, logger: self.logger)
                    XCTAssertEqual(seenBySequence, ["early"], "seq > cursor skipped 'late', committed after 'early' with a smaller sequence number")
                    XCTAssertEqual(page.changes.map { $0.values["name"] }, [.string("late"), .string("early")])
                    let after = try await self.log.pull(after: page.cursor, on: puller, logger: self.logger)
                    XCTAssertEqual(after.changes, [])
                }
            }
        }
    }

    /// Transaction IDs are not commit order: a transaction that took its ID first may write
    /// an object after a younger one did. The versions put it right.
    func testVersionsOrderTheChangesOfAnObjectWhereTransactionIDsDoNot() async throws {
        try await withSchema { database, puller in
            try await database.withConnection { older in
                try await database.withConnection { younger in
                    let card = UUID()
                    try await older.query(#"INSERT INTO "Card" ("Z_ID", title, count, done) VALUES (\#(card), 'first', 0, false)"#, logger: self.logger)
                    try await ServerTestDatabase.execute("BEGIN", on: older)
                    try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), 'takes an ID')"#, on: older)
                    try await younger.query(#"UPDATE "Card" SET title = 'younger' WHERE "Z_ID" = \#(card)"#, logger: self.logger)
                    try await older.query(#"UPDATE "Card" SET title = 'older, committed last' WHERE "Z_ID" = \#(card)"#, logger: self.logger)
                    try await ServerTestDatabase.execute("COMMIT", on: older)

                    let updates = try await self.log.pull(after: .start, on: puller, logger: self.logger).changes.filter { $0.kind == .update }
                    XCTAssertEqual(updates.map(\.version), [3, 2], "the log's order is not the commit order")
                    XCTAssertEqual(updates.last?.values["title"], .string("younger"), "the last in the log is not the last committed")
                    var replica = Replica()
                    for change in updates { replica.apply(change) }
                    XCTAssertEqual(replica.rows[card]?["title"], .string("older, committed last"))
                }
            }
        }
    }

    func testAPullReturnsWholeTransactions() async throws {
        try await withSchema { database, puller in
            for name in ["a", "b"] {
                try await ServerTestDatabase.execute("BEGIN", on: puller)
                for index in 0..<5 {
                    try await puller.query(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), \#("\(name)\(index)"))"#, logger: self.logger)
                }
                try await ServerTestDatabase.execute("COMMIT", on: puller)
            }
            let first = try await self.log.pull(after: .start, limit: 2, on: puller, logger: self.logger)
            XCTAssertEqual(first.changes.count, 5)
            let second = try await self.log.pull(after: first.cursor, limit: 2, on: puller, logger: self.logger)
            XCTAssertEqual(second.changes.compactMap { $0.values["name"] }, (0..<5).map { .string("b\($0)") })
            let third = try await self.log.pull(after: second.cursor, limit: 2, on: puller, logger: self.logger)
            XCTAssertEqual(third.changes, [])
        }
    }

    /// Writers on several connections run transactions of random writes to a few shared
    /// objects, committing (or rolling back, or failing on a deadlock) in random order, while
    /// a puller pulls with random limits. Every committed change is pulled exactly once, in
    /// the log's order, each transaction whole in one page, nothing of a rolled-back one; and
    /// replaying the pulled changes by version gives the server's final rows.
    ///
    /// The seed (printed; `SEED=N` replays it, CI uses a fixed one) fixes each writer's
    /// writes, pauses and outcomes; how the connections interleave is the server's doing.
    func testConcurrentTransactionsAreEachPulledWholeAndOnce() async throws {
        let seed = SeededGenerator.seed()
        print("ServerChangeLogTests: seed \(seed) (replay with SEED=\(seed))")
        try await withSchema { database, puller in
            let cards = (0..<6).map { _ in UUID() }
            for card in cards {
                try await puller.query(#"INSERT INTO "Card" ("Z_ID", title, count, done) VALUES (\#(card), 'start', 0, false)"#, logger: self.logger)
            }
            let before = try await self.log.pull(after: .start, on: puller, logger: self.logger)

            let logger = self.logger
            let pulling = Task { [log] in
                var pages: [ServerChangeLog.Page] = []
                var random = SeededGenerator(seed: seed)
                var cursor = before.cursor
                try await database.withConnection { connection in
                    while !Task.isCancelled {
                        guard let page = try? await log.pull(after: cursor, limit: Int.random(in: 1...8, using: &random), on: connection, logger: logger) else { break }
                        if !page.changes.isEmpty { pages.append(page) }
                        cursor = page.cursor
                        try? await Task.sleep(for: .milliseconds(Int.random(in: 0...5, using: &random)))
                    }
                }
                return pages
            }
            let transactions = try await withThrowingTaskGroup(of: [WriterTransaction].self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        var random = SeededGenerator(seed: seed &+ UInt64(writer) &+ 1)
                        return try await database.withConnection { connection in
                            try await ServerTestDatabase.execute("SET deadlock_timeout = '20ms'", on: connection)
                            var transactions: [WriterTransaction] = []
                            for _ in 0..<10 {
                                transactions.append(try await Self.randomTransaction(on: connection, cards: cards, using: &random, logger: logger))
                            }
                            return transactions
                        }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            pulling.cancel()
            var pages = try await pulling.value
            let pagesWhileWriting = pages.count
            var cursor = pages.last?.cursor ?? before.cursor
            while true {
                let page = try await self.log.pull(after: cursor, limit: 5, on: puller, logger: self.logger)
                if page.changes.isEmpty { break }
                pages.append(page)
                cursor = page.cursor
            }

            let pulled = pages.flatMap(\.changes)
            XCTAssertEqual(pulled.map(\.cursor), pulled.map(\.cursor).sorted(), "in the log's order")
            XCTAssertEqual(Set(pulled.map(\.cursor)).count, pulled.count, "each change once")
            let pagesOfTransaction = Dictionary(grouping: pages.enumerated().flatMap { index, page in page.changes.map { ($0.cursor.transaction, index) } }, by: \.0)
            XCTAssertTrue(pagesOfTransaction.values.allSatisfy { Set($0.map(\.1)).count == 1 }, "each transaction whole in one page")
            let committed = transactions.filter(\.committed)
            XCTAssertGreaterThan(committed.count, 0)
            XCTAssertEqual(
                Dictionary(grouping: pulled, by: \.cursor.transaction).mapValues(\.count),
                Dictionary(uniqueKeysWithValues: committed.filter { $0.writes > 0 }.map { ($0.id, $0.writes) }),
                "every write of a committed transaction, none of another (\(transactions.count - committed.count) rolled back)")

            var replica = Replica()
            for change in before.changes + pulled { replica.apply(change) }
            print("ServerChangeLogTests: \(committed.count) of \(transactions.count) transactions committed, \(pulled.count) changes in \(pages.count) pages (\(pagesWhileWriting) while writing), \(replica.skipped) changes older than one applied")
            let rows = try await puller.query(#"SELECT "Z_ID", title, count FROM "Card""#, logger: self.logger)
            var server: [UUID: [String: Value]] = [:]
            for try await (id, title, count) in rows.decode((UUID, String, Int64).self) {
                server[id] = ["title": .string(title), "count": .integer(count)]
            }
            XCTAssertEqual(replica.rows.mapValues { $0.filter { ["title", "count"].contains($0.key) } }, server, "replayed by version, the pulled changes give the server's rows (seed \(seed))")
        }
    }

    // MARK: - Helpers

    /// What a writer's transaction did: its ID, whether it committed, and how many rows it
    /// wrote (each is one change in the log).
    private struct WriterTransaction: Sendable {
        var id: UInt64
        var committed: Bool
        var writes: Int
    }

    /// One transaction of 1 to 4 random writes with random pauses, committed, rolled back
    /// (one in eight) or failed (a deadlock); a failed one is rolled back.
    private static func randomTransaction(
        on connection: PostgresConnection, cards: [UUID], using random: inout SeededGenerator, logger: Logger
    ) async throws -> WriterTransaction {
        try await ServerTestDatabase.execute("BEGIN", on: connection)
        var id: UInt64 = 0
        for try await txid in try await connection.query("SELECT pg_current_xact_id()::text", logger: logger).decode(String.self) {
            id = UInt64(txid) ?? 0
        }
        var writes = 0
        do {
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let card = cards.randomElement(using: &random)!
                let query: PostgresQuery
                switch Int.random(in: 0..<10, using: &random) {
                case 0: query = #"INSERT INTO "Card" ("Z_ID", title, count, done) VALUES (gen_random_uuid(), 'new', 0, false) RETURNING "Z_ID""#
                case 1: query = #"DELETE FROM "Card" WHERE "Z_ID" = \#(card) RETURNING "Z_ID""#
                case 2...5: query = #"UPDATE "Card" SET count = count + 1 WHERE "Z_ID" = \#(card) RETURNING "Z_ID""#
                default: query = #"UPDATE "Card" SET title = \#(UUID().uuidString) WHERE "Z_ID" = \#(card) RETURNING "Z_ID""#
                }
                for try await _ in try await connection.query(query, logger: logger) { writes += 1 }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...15, using: &random)))
            }
            let commit = Int.random(in: 0..<8, using: &random) != 0
            try await ServerTestDatabase.execute(commit ? "COMMIT" : "ROLLBACK", on: connection)
            return WriterTransaction(id: id, committed: commit, writes: writes)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "40P01" {
            try await ServerTestDatabase.execute("ROLLBACK", on: connection)
            return WriterTransaction(id: id, committed: false, writes: writes)
        }
    }

    /// Runs `body` with a database holding the board model's schema and a connection to it.
    /// A desktop's pull leaves out the changes of its own pushes whose ends it took, of the
    /// entities it names (`skipping:of:`): generated transactions of boards and cards, some
    /// of them "own", pulled with random limits. Every change of the others is pulled once,
    /// in order; none of an own transaction's changes of a named entity is; its changes of
    /// another entity are; and once the pulls find nothing, the cursor is past every change,
    /// so that the skipped ones are not read again.
    func testAPullLeavesOutTheChangesOfTheTransactionsItSkipsAndEndsPastThem() async throws {
        let seed = SeededGenerator.seed()
        print("ServerChangeLogTests seed \(seed) (SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        try await withSchema { database, puller in
            var own: [UInt64] = [], expected: [String] = [], all = 0
            for transaction in 0..<40 {
                let isOwn = Bool.random(using: &random)
                try await ServerTestDatabase.execute("BEGIN", on: puller)
                for index in 0..<Int.random(in: 1...6, using: &random) {
                    let name = "t\(transaction)-\(index)"
                    // Own cards are skipped; own boards are not (the pull names only cards).
                    if Bool.random(using: &random) {
                        try await puller.query(#"INSERT INTO "Card" ("Z_ID", title) VALUES (gen_random_uuid(), \#(name))"#, logger: self.logger)
                        if !isOwn { expected.append(name) }
                    } else {
                        try await puller.query(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), \#(name))"#, logger: self.logger)
                        expected.append(name)
                    }
                    all += 1
                }
                let rows = try await puller.query("SELECT pg_current_xact_id()::text", logger: self.logger)
                for try await id in rows.decode(String.self) where isOwn { own.append(try XCTUnwrap(UInt64(id))) }
                try await ServerTestDatabase.execute("COMMIT", on: puller)
            }
            var cursor = ServerCursor.start
            var pulled: [String] = []
            while true {
                let page = try await self.log.pull(after: cursor, limit: Int.random(in: 1...10, using: &random), skipping: own.shuffled(using: &random),
                                                   of: ["Card"], on: puller, logger: self.logger)
                XCTAssertGreaterThanOrEqual(page.cursor, cursor)
                pulled += page.changes.map { change in
                    guard case .string(let name)? = change.values["title"] ?? change.values["name"] else { return "?" }
                    return name
                }
                if page.changes.isEmpty {
                    cursor = page.cursor
                    break
                }
                cursor = page.cursor
            }
            XCTAssertEqual(pulled, expected)
            XCTAssertLessThan(expected.count, all, "the generated transactions skip nothing (seed \(seed))")
            // The cursor is at the log's last change: nothing is read again.
            let last = try await puller.query(#"SELECT c.txid::text, c.seq FROM "Z_CHANGES" c ORDER BY c.txid DESC, c.seq DESC LIMIT 1"#, logger: self.logger)
            for try await (txid, seq) in last.decode((String, Int64).self) {
                XCTAssertEqual(cursor, ServerCursor(transaction: try XCTUnwrap(UInt64(txid)), sequence: seq))
            }
            // Without them skipped, every change is pulled.
            let everything = try await self.log.pull(after: .start, limit: 10_000, on: puller, logger: self.logger)
            XCTAssertEqual(everything.changes.count, all)
        }
    }

    /// A desktop behind by many changes (back from a day offline, or following a firehose)
    /// pulls a page at a time, and each pull reads about a page of the log, not every change
    /// after its cursor: the last change it skips is looked for only when the page ends the
    /// log. Pulled with the plan a connection's prepared pull gets after its fifth run
    /// (a generic one, which does not see that nothing is skipped); before, its search for
    /// the last skipped change read the whole rest of the log at each pull, 35 to 80 ms a
    /// pull on the server with a backlog of 100,000 changes.
    func testAPullOfAPageReadsAboutAPageOfTheLogHoweverLongTheRest() async throws {
        try await withSchema { database, puller in
            // A transaction of 5 cards the puller wrote itself, then 20 of 500 boards.
            try await ServerTestDatabase.execute("BEGIN", on: puller)
            try await puller.query(#"INSERT INTO "Card" ("Z_ID", title) SELECT gen_random_uuid(), 'own ' || i FROM generate_series(1, 5) i"#, logger: self.logger)
            var ownTransaction: UInt64?
            for try await id in try await puller.query("SELECT pg_current_xact_id()::text", logger: self.logger).decode(String.self) { ownTransaction = UInt64(id) }
            try await ServerTestDatabase.execute("COMMIT", on: puller)
            for transaction in 0..<20 {
                try await puller.query(#"INSERT INTO "Board" ("Z_ID", name) SELECT gen_random_uuid(), 'b' || \#(transaction) || '-' || i FROM generate_series(1, 500) i"#,
                                       logger: self.logger)
            }
            // As autovacuum leaves a log that grew so, and as a connection's prepared pull
            // runs after its fifth time.
            try await ServerTestDatabase.execute(#"ANALYZE "Z_CHANGES""#, on: puller)
            try await ServerTestDatabase.execute("SET plan_cache_mode = force_generic_plan", on: puller)

            /// The rows of the log read so far by this connection's statements whose counts
            /// the server has not gathered yet (it does so when the connection is idle, out
            /// of a transaction, at most once a second).
            func rowsRead() async throws -> Int64 {
                var read: Int64 = -1
                let rows = try await puller.query(#"SELECT (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::bigint FROM pg_stat_xact_user_tables WHERE relname = 'Z_CHANGES'"#,
                                                  logger: self.logger)
                for try await count in rows.decode(Int64.self) { read = count }
                return read
            }
            /// The rows of the log one pull read (by its index scans and its table scans),
            /// and its page: in a transaction, so that nothing is gathered in between.
            func pullReading(after cursor: ServerCursor, skipping: [UInt64]) async throws -> (read: Int64, page: ServerChangeLog.Page) {
                try await ServerTestDatabase.execute("BEGIN", on: puller)
                let before = try await rowsRead()
                let page = try await self.log.pull(after: cursor, limit: 1000, skipping: skipping, of: ["Card"], on: puller, logger: self.logger)
                let read = try await rowsRead() - before
                try await ServerTestDatabase.execute("COMMIT", on: puller)
                return (read, page)
            }
            for skipping in [[], [try XCTUnwrap(ownTransaction)]] {
                var cursor = ServerCursor.start
                var pulled = 0
                for pull in 0..<15 {
                    let (read, page) = try await pullReading(after: cursor, skipping: skipping)
                    if !page.changes.isEmpty { XCTAssertGreaterThan(read, 0, "the statistics counted no read of the log") }
                    // A page of 1,000 changes (two whole transactions), read twice by the
                    // statement (the page, then its rows), and a few more: not all the
                    // changes after the cursor, down to the skipped cards at the log's start.
                    XCTAssertLessThan(read, 2_600, "pull \(pull) after \(pulled) changes, skipping \(skipping.count) transactions, read \(read) rows of the log")
                    pulled += page.changes.count
                    cursor = page.cursor
                    if page.changes.isEmpty { break }
                }
                XCTAssertEqual(pulled, skipping.isEmpty ? 10_005 : 10_000)
                // At the log's end: nothing more, the cursor stays.
                let last = try await self.log.pull(after: cursor, skipping: skipping, of: ["Card"], on: puller, logger: self.logger)
                XCTAssertEqual(last.changes, [])
                XCTAssertEqual(last.cursor, cursor)
            }
            _ = database
        }
    }

    /// Pruning keeps the newest changes in the log's order also when transaction IDs gain a
    /// digit between them: ordered as text, "99…" came after "100…", and a prune kept the
    /// wrong changes. Two transactions of boards, transaction IDs used up to the next power
    /// of ten, two more; keeping the last four changes deletes the first three.
    func testPruningKeepsTheNewestChangesWhenTransactionIDsGainADigit() async throws {
        try await withSchema { database, connection in
            try await commitBoards(on: connection, ["old 1", "old 2"])
            try await commitBoards(on: connection, ["old 3"])
            var current: UInt64 = 0
            for try await text in try await connection.query("SELECT pg_current_xact_id()::text", logger: self.logger).decode(String.self) {
                current = try XCTUnwrap(UInt64(text))
            }
            var nextPower: UInt64 = 10
            while nextPower <= current { nextPower *= 10 }
            // Each subtransaction that writes takes a transaction ID of its own.
            try await ServerTestDatabase.execute(#"""
                DO $$ BEGIN
                    CREATE TEMP TABLE used_up (n int);
                    FOR i IN 1..\#(nextPower - current + 10) LOOP
                        BEGIN INSERT INTO used_up VALUES (i); EXCEPTION WHEN others THEN NULL; END;
                    END LOOP;
                END $$
                """#, on: connection)
            try await commitBoards(on: connection, ["new 1", "new 2"])
            try await commitBoards(on: connection, ["new 3", "new 4"])
            let pruned = try await self.log.prune(keepingLast: 4, on: connection, logger: self.logger)
            XCTAssertEqual(pruned, 3)
            let left = try await self.log.pull(after: .start, on: connection, logger: self.logger)
            XCTAssertEqual(left.changes.compactMap { $0.values["name"] }, ["new 1", "new 2", "new 3", "new 4"].map { .string($0) })
            XCTAssertNotNil(left.prunedThrough, "a reader from the start is told to resync")
        }
    }

    /// A prune never deletes a change the pruning desktop has not read. A transaction open
    /// elsewhere on the server (any program's, in any database) holds the horizon back, so a
    /// pull does not see the transactions that committed after it began. When it ends before
    /// the prune, the newest `count` changes are all of those: keeping only them would delete
    /// changes after the reader's cursor, and its next pull would have to resync. The mark of
    /// the prune never moves back, whatever a later prune keeps.
    func testAPruneKeepsEveryChangeAfterThePrunersCursorWhenAnOpenTransactionHidThemFromItsPull() async throws {
        try await withSchema { database, connection in
            try await commitBoards(on: connection, ["seen 1", "seen 2"])
            try await database.withConnection { holder in
                // Open, with a transaction ID: later transactions stay above every snapshot's horizon.
                try await ServerTestDatabase.execute("BEGIN", on: holder)
                _ = try await holder.query("SELECT pg_current_xact_id()", logger: self.logger).collect()
                for n in 1...3 { try await commitBoards(on: connection, ["hidden \(n)a", "hidden \(n)b"]) }
                let page = try await self.log.pull(after: .start, on: connection, logger: self.logger)
                XCTAssertEqual(page.changes.compactMap { $0.values["name"] }, [.string("seen 1"), .string("seen 2")],
                               "the pull sees only what committed before the open transaction")
                try await ServerTestDatabase.execute("COMMIT", on: holder)
                // Without the cursor, the two newest changes are kept: "hidden 3a" and "3b".
                let pruned = try await self.log.prune(keepingLast: 2, notPast: page.cursor, on: connection, logger: self.logger)
                XCTAssertEqual(pruned, 2, "only the changes the pull read are deleted")
                let next = try await self.log.pull(after: page.cursor, on: connection, logger: self.logger)
                XCTAssertFalse(next.prunedThrough.map { page.cursor < $0 } ?? false, "the pruner is not sent to resync")
                XCTAssertEqual(next.changes.count, 6, "every hidden change is still there to pull")
                // A prune that keeps fewer, and a desktop further behind, never move the mark back.
                _ = try await self.log.prune(keepingLast: 0, notPast: .start, on: connection, logger: self.logger)
                let fromStart = try await self.log.pull(after: .start, on: connection, logger: self.logger)
                XCTAssertEqual(fromStart.prunedThrough, page.cursor, "the mark stays at the furthest prune")
                // Without the pruner's cursor, the prune deletes changes its pull never read.
                _ = try await self.log.prune(keepingLast: 2, on: connection, logger: self.logger)
                let after = try await self.log.pull(after: page.cursor, on: connection, logger: self.logger)
                XCTAssertTrue(after.prunedThrough.map { page.cursor < $0 } ?? false)
                // A mark written by hand that is no cursor does not stop the next prune, which
                // replaces it (of the newest change's transaction: compared as a cursor, it failed).
                try await commitBoards(on: connection, ["later"])
                let newest = try await database.values(of: #"SELECT txid::text FROM "Z_CHANGES" ORDER BY txid DESC LIMIT 1"#)
                try await ServerTestDatabase.execute(#"UPDATE "Z_SHARING" SET value = '\#(newest[0]):by hand' WHERE key = 'prunedThrough'"#, on: connection)
                _ = try await self.log.prune(keepingLast: 0, on: connection, logger: self.logger)
                let last = try await self.log.pull(after: .start, on: connection, logger: self.logger)
                XCTAssertEqual(last.changes, [])
                XCTAssertNotNil(last.prunedThrough, "the mark is a cursor again")
            }
        }
    }

    /// Inserts boards of these names in one transaction.
    private func commitBoards(on connection: PostgresConnection, _ names: [String]) async throws {
        try await ServerTestDatabase.execute("BEGIN", on: connection)
        for name in names {
            try await connection.query(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), \#(name))"#, logger: logger)
        }
        try await ServerTestDatabase.execute("COMMIT", on: connection)
    }

    private func withSchema(_ body: (ServerTestDatabase, PostgresConnection) async throws -> Void) async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: self.logger)
                try await body(database, connection)
            }
        }
    }
}

/// The objects a reader would hold after applying changes: per object, the highest version
/// applied, so that a change older than one already applied is skipped.
struct Replica {
    var rows: [UUID: [String: Value]] = [:]
    var versions: [UUID: Int64] = [:]
    /// How many changes came after a newer one of their object, and were skipped.
    var skipped = 0

    mutating func apply(_ change: ServerChange) {
        guard change.version > versions[change.object, default: 0] else { return skipped += 1 }
        versions[change.object] = change.version
        rows[change.object] = change.kind == .delete ? nil : change.values
    }
}
