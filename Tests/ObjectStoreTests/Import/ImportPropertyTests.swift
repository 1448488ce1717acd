import Foundation
import ObjectStore
import XCTest

/// Generated files, bad lines, chunk sizes and interruptions: however often an import stops
/// and is run again (each time on a store opened anew, as after a crash), the store ends
/// with every record of the file exactly once, in file order.
final class ImportPropertyTests: XCTestCase {
    private struct Team: Equatable {
        var name: String
        var zone: String
        var wins: Int
    }

    /// How a bad record is spelled, and the field the import must blame.
    private enum Flaw: CaseIterable {
        case winsNotANumber, winsNegative, nameMissing
        var field: String { self == .nameMissing ? "teamName" : "wins" }
    }

    func testEveryRecordIsImportedExactlyOnceWhateverStopsTheImport() throws {
        let seed = SeededGenerator.seed()
        var generator = SeededGenerator(seed: seed)
        for round in 1...10 {
            try checkRound(&generator, context: "seed \(seed) round \(round) (replay with SEED=\(seed))")
        }
    }

    private func checkRound(_ generator: inout SeededGenerator, context: String) throws {
        let folder = try temporaryFolder(self)
        let csv = Bool.random(using: &generator)
        let pieces = [",", "\"", "\n", "é", " ", "x", "\r\n", "'", "{}"]
        let teams = (1...Int.random(in: 1...300, using: &generator)).map { index in
            Team(name: "T\(index)" + (0..<Int.random(in: 0...3, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined(),
                 zone: ["Africa", "Asia, East", "\"Quoted\"", "Europe"].randomElement(using: &generator)!,
                 wins: Int.random(in: 0...9, using: &generator))
        }
        var flaws: [Int: Flaw] = [:]
        for _ in 0..<Int.random(in: 0...3, using: &generator) {
            flaws[Int.random(in: 0..<teams.count, using: &generator)] = Flaw.allCases.randomElement(using: &generator)!
        }
        let chunkSize = Int.random(in: 1...40, using: &generator)
        let crlf = Bool.random(using: &generator)
        let blankLines = (0..<teams.count).map { _ in Int.random(in: 0...9, using: &generator) == 0 }
        let file = folder.appendingPathComponent(csv ? "teams.csv" : "teams.jsonl")
        let context = "\(context): \(csv ? "CSV" : "JSON lines"), \(teams.count) records, chunks of \(chunkSize), flaws \(flaws.sorted { $0.key < $1.key })"

        var lines: [Int] = []
        func writeFile() throws {
            var text = csv ? "teamName,qualifyingZone,wins" + (crlf ? "\r\n" : "\n") : ""
            lines = []
            for (index, team) in teams.enumerated() {
                if !csv && blankLines[index] { text += "\n" }
                lines.append(text.filter { $0 == "\n" || $0 == "\r\n" }.count + 1)
                text += render(team, flaw: flaws[index], csv: csv) + (crlf ? "\r\n" : "\n")
            }
            try Data(text.utf8).write(to: file)
        }
        try writeFile()

        var attempts = 0
        while true {
            attempts += 1
            guard attempts < 200 else { return XCTFail("\(context): no end after 200 runs") }
            // A store opened anew each run, as a process started again after a crash would.
            let store = try PersistentStore(url: folder.appendingPathComponent("store.sqlite"), model: Fixtures.worldCupModel())
            let importer = try ObjectImporter(store: store, entityName: "Team", file: file, chunkSize: chunkSize)
            let cancelAfter = Int.random(in: 0...3, using: &generator)  // 0: never
            let progressCalls = Locked(0)
            do {
                let result = try importer.run { _ in
                    let calls = progressCalls.withLock { calls in calls += 1; return calls }
                    if calls == cancelAfter { importer.cancel() }
                }
                if result.outcome == .finished {
                    XCTAssertTrue(flaws.isEmpty, "\(context): finished with bad records left")
                    break
                }
            } catch let error as ImportError {
                guard let bad = flaws.keys.min() else { return XCTFail("\(context): \(error)") }
                XCTAssertEqual(error.kind, .badRecord, context)
                XCTAssertEqual(error.line, lines[bad], "\(context): \(error)")
                XCTAssertEqual(error.field, flaws[bad]!.field, "\(context): \(error)")
                XCTAssertEqual(try ImportFixtures.teamNames(store), teams.prefix(bad).map(\.name),
                               "\(context): the records before the bad one are committed")
                flaws[bad] = nil
                try writeFile()
            }
        }
        let store = try PersistentStore(url: folder.appendingPathComponent("store.sqlite"), model: Fixtures.worldCupModel())
        let imported = try ImportFixtures.rows(store, "Team", ["teamName", "qualifyingZone", "wins"]).map { row -> Team in
            guard case .string(let name) = row[0], case .string(let zone) = row[1], case .integer(let wins) = row[2] else {
                return Team(name: "?", zone: "?", wins: -1)
            }
            return Team(name: name, zone: zone, wins: Int(wins))
        }
        XCTAssertEqual(imported.count, teams.count, context)
        XCTAssertEqual(imported, teams, context)
    }

    private func render(_ team: Team, flaw: Flaw?, csv: Bool) -> String {
        let name: String? = flaw == .nameMissing ? nil : team.name
        let wins: Any = flaw == .winsNotANumber ? "x" : flaw == .winsNegative ? -1 : team.wins
        if csv {
            return [name ?? "", team.zone, "\(wins)"].map(quoted).joined(separator: ",")
        }
        let object: [String: Any] = ["teamName": name ?? NSNull(), "qualifyingZone": team.zone, "wins": wins]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    private func quoted(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
