import Foundation
import PostgresNIO
import TestSupport
import XCTest

/// Desktops as a person runs them: `fetched-results apply` and `watch` processes sharing
/// World Cup stores through one test database.
final class SharedCommandTests: XCTestCase {
    private var executable: URL { builtExecutable("fetched-results", besides: SharedCommandTests.self) }

    func testAnApplyOnOneDesktopShowsInTheWatchOfAnotherAsValidBatchesWithEqualLists() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let url = database.url
            let seed = SeededGenerator.seed()
            var random = SeededGenerator(seed: seed)
            print("SharedCommandTests seed \(seed) (SEED=\(seed) replays it)")

            let applier = try startProcess(executable, ["apply", "--store", folder.appendingPathComponent("a.sqlite").path, "--share", url])
            let applied = LineReader(applier.output.fileHandleForReading)
            defer { if applier.process.isRunning { applier.process.terminate() } }
            // A first save, once A seeded the database: B then joins a database with data.
            applier.input.write(Data("{\"op\":\"save\"}\n".utf8))
            _ = try applied.waitFor(1)

            let watcher = try startProcess(executable, ["watch", "--store", folder.appendingPathComponent("b.sqlite").path, "--share", url])
            let watched = LineReader(watcher.output.fileHandleForReading)
            defer { if watcher.process.isRunning { watcher.process.terminate() } }
            var sections = try sectionCounts(watched.waitFor(1)[0])
            XCTAssertEqual(sections.map(\.1).reduce(0, +), 32, "B shows the server's 32 teams, not its seed added to them")

            let teams = ["Ghana", "Japan", "Brazil", "Spain", "Mexico", "Australia", "Italy", "Chile"]
            let zones = ["Africa", "Asia", "Europe", "South America", "North/Central America", "Oceania"]
            var latencies: [Double] = []
            var inserted: [String] = []
            for number in 1...100 {
                let operation: String
                switch random.next() % 10 {
                case 0:
                    let name = "Team \(number)"
                    inserted.append(name)
                    operation = #"{"op":"insert","entity":"Team","values":{"teamName":"\#(name)","qualifyingZone":"\#(zones[Int(random.next() % 6)])"}}"#
                case 1 where !inserted.isEmpty:
                    operation = #"{"op":"delete","entity":"Team","where":"teamName == '\#(inserted.removeFirst())'"}"#
                default:
                    operation = #"{"op":"update","entity":"Team","where":"teamName == '\#(teams[Int(random.next() % 8)])'","set":{"wins":\#(number)}}"#
                }
                applier.input.write(Data((operation + "\n{\"op\":\"save\"}\n").utf8))
                let save = try applied.waitFor(number + 1)[number]
                let savedAt = ContinuousClock.now
                let line = try watched.waitFor(number + 1)[number]
                latencies.append(Double((ContinuousClock.now - savedAt).components.attoseconds) / 1e15)
                let changes = try XCTUnwrap(line["changes"] as? [[String: Any]], "edit \(number): \(line)")
                XCTAssertFalse(changes.isEmpty, "edit \(number) (\(operation)) shows on B")
                let next = try sectionCounts(line)
                try checkBatch(changes, from: sections, to: next, write: number)
                XCTAssertEqual(next.map(\.0), try sectionCounts(save).map(\.0), "edit \(number): B's sections are A's")
                XCTAssertEqual(next.map(\.1), try sectionCounts(save).map(\.1), "edit \(number): B's counts are A's")
                sections = next
            }
            latencies.sort()
            print("apply on A to watch on B: median \(Int(latencies[49])) ms, p95 \(Int(latencies[94])) ms (scripts/benchmark measures it against its target)")
            applier.input.closeFile()
            applier.process.waitUntilExit()
            XCTAssertEqual(applier.process.terminationStatus, 0)
            watcher.process.interrupt()
            watcher.process.waitUntilExit()
            let a = try sqlite3(folder.appendingPathComponent("a.sqlite"), "SELECT teamName, qualifyingZone, wins FROM Team ORDER BY teamName")
            let b = try sqlite3(folder.appendingPathComponent("b.sqlite"), "SELECT teamName, qualifyingZone, wins FROM Team ORDER BY teamName")
            XCTAssertEqual(a, b, "both stores hold the same teams")
        }
    }

    func testAStoreRemembersItsServerAndUnshareForgetsIt() async throws {
        try await ServerTestDatabase.with { database in
            let store = try temporaryFolder(self).appendingPathComponent("a.sqlite").path
            let first = try runCommand(["apply", "--store", store, "--share", database.url], input: "{\"op\":\"save\"}\n")
            XCTAssertEqual(first.status, 0, first.errors)
            XCTAssertTrue(first.errors.contains("sharing: connected to \(database.configuration)"), first.errors)
            let again = try runCommand(["apply", "--store", store], input: #"{"op":"update","entity":"Team","where":"teamName == 'Ghana'","set":{"wins":4}}"# + "\n{\"op\":\"save\"}\n")
            XCTAssertTrue(again.errors.contains("sharing: connected to"), "shares without --share: \(again.errors)")
            let wins = try await database.withConnection { connection in
                var wins: [Int64] = []
                for try await value in try await connection.query(#"SELECT wins FROM "Team" WHERE "teamName" = 'Ghana'"#, logger: ServerTestDatabase.logger).decode(Int64.self) {
                    wins.append(value)
                }
                return wins
            }
            XCTAssertEqual(wins, [4], "the edit reached the server")
            let off = try runCommand(["apply", "--store", store, "--unshare"], input: "")
            XCTAssertTrue(off.errors.contains("no longer shares through \(database.configuration)"), off.errors)
            let alone = try runCommand(["apply", "--store", store], input: "{\"op\":\"save\"}\n")
            XCTAssertFalse(alone.errors.contains("sharing"), alone.errors)
            XCTAssertFalse(try sqlite3(URL(fileURLWithPath: store), "SELECT value FROM Z_SHARING").contains("password"), "no secret in the store")
            let bad = try runCommand(["apply", "--store", store, "--share", "http://example.com/x"], input: "")
            XCTAssertNotEqual(bad.status, 0)
            XCTAssertTrue(bad.errors.contains("--share: http://example.com/x is not a server address"), bad.errors)
        }
    }

    /// A row written on the server with SQL that breaks the model is printed on standard
    /// error, once, with what it names and why, and the command goes on and exits 0.
    func testARejectedChangeIsPrintedOnStandardError() async throws {
        try await ServerTestDatabase.with { database in
            let store = try temporaryFolder(self).appendingPathComponent("a.sqlite").path
            let first = try runCommand(["apply", "--store", store, "--share", database.url], input: "{\"op\":\"save\"}\n")
            XCTAssertEqual(first.status, 0, first.errors)
            try await database.withConnection { connection in
                try await ServerTestDatabase.execute(#"UPDATE "Team" SET "teamName" = '' WHERE "teamName" = 'Ghana'"#, on: connection)
            }
            let next = try runCommand(["apply", "--store", store], input: "{\"op\":\"save\"}\n")
            XCTAssertEqual(next.status, 0, next.errors)
            let lines = next.errors.split(separator: "\n").filter { $0.hasPrefix("sharing: rejected: ") }
            XCTAssertEqual(lines.count, 1, next.errors)
            XCTAssertTrue(lines.first?.hasSuffix("from the server, not taken: teamName must not be empty") == true, next.errors)
            XCTAssertTrue(next.errors.contains("1 rejected"), "the status counts it: \(next.errors)")
            XCTAssertEqual(try sqlite3(URL(fileURLWithPath: store), "SELECT count(*) FROM Team WHERE teamName = 'Ghana'"), "1", "the store keeps its value")
        }
    }

    private func runCommand(_ arguments: [String], input: String) throws -> (status: Int32, output: String, errors: String) {
        let started = try startProcess(executable, arguments)
        started.input.write(Data(input.utf8))
        started.input.closeFile()
        let output = started.output.fileHandleForReading.readDataToEndOfFile()
        let errors = started.errors.fileHandleForReading.readDataToEndOfFile()
        started.process.waitUntilExit()
        return (started.process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }
}

extension ServerTestDatabase {
    /// The database's URL, as a person passes it to `--share`.
    var url: String { "\(configuration)" }
}
