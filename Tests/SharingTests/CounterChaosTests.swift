import Foundation
import GRDB
import PostgresNIO
import TestSupport
import XCTest

/// The counter's promise, tried the hard way: two desktops (stores sharing one real
/// PostgreSQL), each with two processes on its store (`apply --share`, as a viewer and a
/// script would be), tapping two World Cup teams' wins and undoing their own last taps
/// (an Undo saves minus the tap, as the viewer's does) at random, while the server is
/// stopped and started again, connections are cut, and processes are killed (SIGKILL) at random moments,
/// between a save and its push included. At the end every store and the server hold
/// exactly the seed's wins plus every tap that was saved, and no conflict was recorded for
/// the counter.
///
/// A tap whose acknowledgement a kill cut off is known saved or not exactly: the same save
/// sets the process's own marker team's zone to the tap's number, and the store is read
/// once the process is dead.
final class CounterChaosTests: XCTestCase {
    private var executable: URL { builtExecutable("fetched-results", besides: CounterChaosTests.self) }
    static let teams = ["Ghana", "Japan"]

    func testTapsAndUndosFromFourProcessesOnTwoDesktopsThroughKillsAndServerStopsAddUpExactly() async throws {
        try await ServerTestDatabase.with { database in
            signal(SIGPIPE, SIG_IGN)
            let seed = SeededGenerator.seed()
            let operations = Int(ProcessInfo.processInfo.environment["TAPS"] ?? "") ?? 300
            print("CounterChaosTests seed \(seed), \(operations) operations a process (SEED=\(seed) TAPS=\(operations) replays it)")
            let folder = try temporaryFolder(self)
            let stores = (0..<2).map { folder.appendingPathComponent("d\($0).sqlite") }
            let tappers = (0..<4).map { index in
                Tapper(index: index, process: ApplyProcess(store: stores[index / 2], executable: executable,
                                                           errorFile: folder.appendingPathComponent("p\(index).err")))
            }
            // Desktop 0 seeds the server with World Cup and a marker team per process;
            // desktop 1 joins; then the second process of each desktop starts on its store.
            try tappers[0].process.start(sharing: database.url)
            for tapper in tappers {
                XCTAssertEqual(tappers[0].process.send(#"{"op":"insert","entity":"Team","values":{"teamName":"\#(tapper.marker)","qualifyingZone":"tap 0","wins":0}}"#), .acknowledged)
            }
            try tappers[2].process.start(sharing: database.url)
            try await eventually("desktop 1 takes the markers", timeout: .seconds(30)) {
                var configuration = Configuration()
                configuration.readonly = true
                return (try? DatabaseQueue(path: stores[1].path, configuration: configuration).read { db in
                    try db.tableExists("Team") ? Int.fetchOne(db, sql: "SELECT count(*) FROM Team WHERE teamName LIKE 'Marker %'") : 0
                }) == 4
            }
            try tappers[1].process.start()
            try tappers[3].process.start()
            let seeded = try await serverWins(database)
            XCTAssertEqual(Set(seeded.keys), Set(Self.teams))

            let done = Flag()
            // Stop the server now and then, for a while: every process goes offline, keeps
            // saving, and pushes when it is back.
            let stopper = Thread {
                var random = SeededGenerator(seed: seed &+ 31)
                var stops = 0
                while !done.isSet {
                    Thread.sleep(forTimeInterval: 1.0 + Double(random.next() % 1500) / 1000)
                    if done.isSet { break }
                    guard (try? ServerTestDatabase.server("stop")) != nil else { continue }
                    stops += 1
                    Thread.sleep(forTimeInterval: 0.3 + Double(random.next() % 1200) / 1000)
                    try? ServerTestDatabase.server("start")
                }
                Stops.count = stops
            }
            stopper.start()
            // Cut every connection of the test database now and then, pushes in the middle
            // included: a push the server committed whose answer a desktop never got.
            let terminator = Task {
                var random = SeededGenerator(seed: seed &+ 99)
                var terminated = 0
                while !done.isSet {
                    try? await Task.sleep(for: .milliseconds(100 + Int(random.next() % 400)))
                    terminated += await database.terminateConnections()
                }
                return terminated
            }
            // Kill a process now and then; its driver starts it again.
            let killer = Thread {
                var random = SeededGenerator(seed: seed &+ 7)
                while !done.isSet {
                    Thread.sleep(forTimeInterval: 0.3 + Double(random.next() % 700) / 1000)
                    if done.isSet { break }
                    tappers[Int(random.next() % 4)].process.kill()
                }
            }
            killer.start()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    DispatchQueue.concurrentPerform(iterations: 4) { index in
                        var random = SeededGenerator(seed: seed &+ UInt64(index))
                        tappers[index].run(operations, random: &random)
                    }
                    continuation.resume()
                }
            }
            done.set()
            let terminated = await terminator.value
            while stopper.isExecuting || killer.isExecuting { try await Task.sleep(for: .milliseconds(50)) }
            // The server runs (the stopper ended after a start); each process ends, pushing
            // what it has; then each desktop starts once more, twice round, and takes what
            // the other pushed.
            for tapper in tappers { tapper.process.finish() }
            for _ in 0..<2 {
                for tapper in [tappers[0], tappers[2]] {
                    try tapper.process.start()
                    XCTAssertEqual(tapper.process.send(#"{"op":"save"}"#), .acknowledged)
                    tapper.process.finish()
                }
            }
            let kills = tappers.map(\.process.kills).reduce(0, +)
            let uncertain = tappers.map(\.cutOff).reduce(0, +)
            print("CounterChaosTests: \(kills) processes killed (\(uncertain) saves' acknowledgements cut off), the server stopped \(Stops.count) times, \(terminated) connections cut")
            XCTAssertGreaterThan(kills, 0, "a process was killed")
            XCTAssertGreaterThan(Stops.count, 0, "the server was stopped")

            let server = try await serverWins(database)
            for team in Self.teams {
                let saved = tappers.map { $0.saved[team, default: 0] }.reduce(0, +)
                let expected = seeded[team]! + saved
                XCTAssertEqual(server[team], expected, "\(team) on the server: the seed's \(seeded[team]!) wins and \(saved) saved")
                for (index, store) in stores.enumerated() {
                    let local = try sqlite3(store, "SELECT wins FROM Team WHERE teamName = '\(team)'")
                    XCTAssertEqual(local, String(expected), "\(team) in desktop \(index)'s store")
                }
            }
            for (index, store) in stores.enumerated() {
                let conflicts = try sqlite3(store, "SELECT count(*) FROM Z_SHARED_CONFLICT WHERE keys LIKE '%wins%'")
                XCTAssertEqual(conflicts, "0", "desktop \(index) recorded no conflict for the counter")
            }
        }
    }

    private func serverWins(_ database: ServerTestDatabase) async throws -> [String: Int64] {
        try await database.withConnection { connection in
            var wins: [String: Int64] = [:]
            let names = Self.teams.map { "'\($0)'" }.joined(separator: ",")
            let rows = try await connection.query(PostgresQuery(unsafeSQL: #"SELECT "teamName", wins FROM "Team" WHERE "teamName" IN (\#(names))"#), logger: ServerTestDatabase.logger)
            for try await (name, count) in rows.decode((String, Int64).self) { wins[name] = count }
            return wins
        }
    }
}

/// How many times the server was stopped (set once the stopper ends).
private enum Stops { nonisolated(unsafe) static var count = 0 }

/// One process's driver: taps (+1 to +3) and undoes its own last tap on a team, each in a
/// save that also sets its marker team's zone to the operation's number.
private final class Tapper: @unchecked Sendable {
    let index: Int
    let process: ApplyProcess
    var marker: String { "Marker \(index)" }
    /// The wins this process's saved operations added, per team.
    private(set) var saved: [String: Int64] = [:]
    /// Operations whose acknowledgement a kill cut off (their outcome read from the marker).
    private(set) var cutOff = 0

    init(index: Int, process: ApplyProcess) {
        self.index = index
        self.process = process
    }

    func run(_ count: Int, random: inout SeededGenerator) {
        // The taps saved and not undone, per team, last on top.
        var taps: [String: [Int64]] = [:]
        for number in 1...count {
            let team = CounterChaosTests.teams[Int(random.next() % 2)]
            let undo = random.next() % 10 < 3 && !(taps[team] ?? []).isEmpty
            let amount = undo ? -taps[team]!.last! : Int64(1 + random.next() % 3)
            let operation = """
                {"op":"update","entity":"Team","where":"teamName == '\(team)'","add":{"wins":\(amount)}}
                {"op":"update","entity":"Team","where":"teamName == '\(marker)'","set":{"qualifyingZone":"tap \(number)"}}
                """
            var wasSaved = process.send(operation) == .acknowledged
            if !wasSaved {
                // Killed (or stuck): started again once the old one is gone, and the store
                // says whether the save was made.
                cutOff += 1
                try? process.start()
                let zone = try? sqlite3(process.store, "SELECT qualifyingZone FROM Team WHERE teamName = '\(marker)'")
                wasSaved = zone == "tap \(number)"
            }
            guard wasSaved else { continue }
            saved[team, default: 0] += amount
            if undo { taps[team]!.removeLast() } else { taps[team, default: []].append(amount) }
        }
    }
}
