import Foundation
import XCTest

/// The `fetched-results` executable, run as a person runs it.
final class CommandTests: XCTestCase {
    private var executable: URL { builtExecutable("fetched-results", besides: CommandTests.self) }

    private func run(_ arguments: [String], input: String = "") throws -> (status: Int32, output: String, errors: String) {
        let (process, stdin, stdout, stderr) = try startProcess(executable, arguments, environment: ["XDG_DATA_HOME": try temporaryFolder(self).path])
        stdin.write(Data(input.utf8))
        try stdin.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    func testVersionIsTheReleaseMesonInstalls() throws {
        let result = try run(["--version"])
        XCTAssertEqual(result.status, 0, result.errors)
        let meson = try String(contentsOf: URL(fileURLWithPath: #filePath).appendingPathComponent("../../../meson.build").standardized, encoding: .utf8)
        let release = try XCTUnwrap(meson.range(of: #"version: '([0-9.]+)'"#, options: .regularExpression).map { String(meson[$0]) })
        XCTAssertEqual("version: '\(result.output.trimmingCharacters(in: .whitespacesAndNewlines))'", release)
    }

    func testDumpPrintsSectionsAsJSON() throws {
        let result = try run(["dump", "--dataset", "movies"])
        XCTAssertEqual(result.status, 0, result.errors)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let sections = try XCTUnwrap(json["sections"] as? [[String: Any]])
        XCTAssertEqual(sections.map { $0["title"] as? String }, ["Lent", "Not lent"])
    }

    func testApplyPrintsEachSavesBatchAndReportsBadLines() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite").path
        let input = """
            {"op":"update","entity":"Team","where":"teamName == 'Ghana'","set":{"wins":2}}
            {"op":"save"}
            {"op":"insert","entity":"Team","values":{"teamName":"Atlantis","qualifyingZone":"Oceania"}}
            {"op":"update","entity":"Team","where":"teamName == 'Ghana'","set":{"wins":"many"}}
            {"op":"save"}
            not json
            {"op":"delete","entity":"Team","where":"qualifyingZone == 'Oceania'"}
            {"op":"save"}

            """
        let result = try run(["apply", "--dataset", "worldcup", "--store", store], input: input)
        XCTAssertEqual(result.status, 1, "bad lines make the exit status 1")
        let lines = result.output.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(lines.count, 3)
        let first = lines[0]["changes"] as! [[String: Any]]
        XCTAssertEqual(first.count, 1)
        XCTAssertEqual(first[0]["type"] as? String, "move")
        XCTAssertEqual(first[0]["from"] as? [Int], [0, 2])
        XCTAssertEqual(first[0]["to"] as? [Int], [0, 0])
        let second = lines[1]["changes"] as! [[String: Any]]
        XCTAssertEqual(second.map { $0["kind"] as? String }, ["section", "object"])
        XCTAssertEqual(second[0]["name"] as? String, "Oceania")
        XCTAssertTrue((second[1]["id"] as? String)?.hasPrefix("Team/") == true)
        XCTAssertFalse((second[1]["id"] as? String)?.contains("/t") == true, "saved objects are reported with their permanent IDs")
        let third = lines[2]["changes"] as! [[String: Any]]
        XCTAssertEqual(third.map { $0["type"] as? String }, ["delete", "delete"])
        XCTAssertTrue(result.errors.contains("line 4: Team.wins: \"many\" is not an integer"), result.errors)
        XCTAssertTrue(result.errors.contains("line 6: not valid JSON ("), result.errors)
        // What was saved stays: Ghana kept its two wins.
        let dump = try run(["dump", "--dataset", "worldcup", "--store", store])
        XCTAssertTrue(dump.output.contains(#""teamName":"Ghana","wins":2"#), dump.output)
    }

    func testValuesOutOfRangeOrOfTheWrongTypeAreRefusedSayingWhyAndNothingWraps() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite").path
        let update = { (value: String) in "{\"op\":\"update\",\"entity\":\"Team\",\"where\":\"teamName == 'Ghana'\",\"set\":{\"wins\":\(value)}}" }
        let input = [update("18446744073709551615"), update("1e400"), update("\"3\""), update("true"), update("2"), "{\"op\":\"save\"}"]
            .joined(separator: "\n") + "\n"
        let result = try run(["apply", "--dataset", "worldcup", "--store", store], input: input)
        XCTAssertEqual(result.status, 1)
        for expected in ["line 1: Team.wins: 18446744073709551615 is outside the integer range (-9223372036854775808 to 9223372036854775807)",
                         "line 2: not valid JSON (Number 1e400 is not representable",
                         "line 3: Team.wins: \"3\" is not an integer",
                         "line 4: Team.wins: true is not an integer"] {
            XCTAssertTrue(result.errors.contains(expected), "\(expected)\n\(result.errors)")
        }
        let dump = try run(["dump", "--dataset", "worldcup", "--store", store])
        XCTAssertTrue(dump.output.contains(#""teamName":"Ghana","wins":2"#), "only the good line was saved: \(dump.output)")

        let banks = try temporaryFolder(self).appendingPathComponent("banks.sqlite").path
        let date = "{\"op\":\"update\",\"entity\":\"FailedBankDetails\",\"where\":\"zip > 0\",\"set\":{\"closeDate\":1e300}}\n"
        let dated = try run(["apply", "--dataset", "failedbanks", "--store", banks], input: date)
        XCTAssertTrue(dated.errors.contains("line 1: FailedBankDetails.closeDate: 1e+300 seconds since 1970 is outside the date range (the years 1 to 9999"), dated.errors)
    }

    func testARefusedLineChangesNothingAndTheSaveAfterItKeepsTheGoodLines() throws {
        let store = try temporaryFolder(self).appendingPathComponent("todo.sqlite").path
        let input = """
            {"op":"delete","entity":"List","where":"title == 'Someday'"}
            {"op":"insert","entity":"Item","values":{"name":"Plan","list":"List/3"}}
            {"op":"insert","entity":"Item","values":{"name":"Ghost","list":"List/99"}}
            {"op":"insert","entity":"Item","values":{"name":"Call","list":"List/2"}}
            {"op":"save"}

            """
        let result = try run(["apply", "--dataset", "todo", "--store", store], input: input)
        XCTAssertEqual(result.status, 1, "two bad lines")
        XCTAssertTrue(result.errors.contains("line 2: list: List/3 was deleted earlier in this input; name an object that is not deleted"), result.errors)
        XCTAssertTrue(result.errors.contains("line 3: list: no object List/99 in the store"), result.errors)
        XCTAssertFalse(result.errors.contains("line 5"), "the save wrote the good lines: \(result.errors)")
        let dump = try run(["dump", "--dataset", "todo", "--store", store]).output
        XCTAssertFalse(dump.contains("Someday"), dump)
        XCTAssertTrue(dump.contains("\"Call\""), dump)
        XCTAssertFalse(dump.contains("\"Plan\"") || dump.contains("\"Ghost\""), dump)
    }

    func testABadStorePathOrAnUnfinishedInputIsSaidPlainly() throws {
        let folder = try temporaryFolder(self)
        let file = folder.appendingPathComponent("plain.txt")
        try Data("x".utf8).write(to: file)
        for (store, message) in [(folder.path, "is a folder; give a file in it, e.g. --store \(folder.path)/worldcup.sqlite"),
                                 ("", "--store: the path is empty"),
                                 (file.appendingPathComponent("cup.sqlite").path, "\(file.path) is a file, not a folder")] {
            let result = try run(["dump", "--dataset", "worldcup", "--store", store])
            XCTAssertNotEqual(result.status, 0)
            XCTAssertTrue(result.errors.contains(message), "\(store): \(result.errors)")
            XCTAssertFalse(result.errors.contains("disk I/O error") || result.errors.contains("NSCocoaErrorDomain"), result.errors)
        }
        let store = folder.appendingPathComponent("cup.sqlite").path
        let result = try run(["apply", "--dataset", "worldcup", "--store", store], input: """
            {"op":"update","entity":"Team","where":"teamName == 'Atlantis'","set":{"wins":1}}
            {"op":"update","entity":"Team","where":"teamName == 'Ghana'","set":{"wins":1}}

            """)
        XCTAssertEqual(result.status, 1, "the unsaved change is a problem")
        XCTAssertTrue(result.errors.contains("line 1: note: no Team matches teamName == \"Atlantis\"; nothing changed"), result.errors)
        XCTAssertTrue(result.errors.contains("the input ended with 1 unsaved change (after line 2), not saved; end the input with {\"op\":\"save\"}"), result.errors)
    }

    func testWatchPrintsAValidBatchForEveryCommitOfOtherProcesses() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite").path
        XCTAssertEqual(try run(["dump", "--dataset", "worldcup", "--store", store]).status, 0, "seeds the store")
        let watcher = Process()
        watcher.executableURL = executable
        watcher.arguments = ["watch", "--dataset", "worldcup", "--store", store]
        let output = Pipe()
        watcher.standardOutput = output
        let lines = LineReader(output.fileHandleForReading)
        try watcher.run()
        defer { if watcher.isRunning { watcher.terminate() } }

        var sections = try sectionCounts(lines.waitFor(1)[0])
        let writes: [() throws -> Void] = [
            { try self.apply(#"{"op":"update","entity":"Team","where":"teamName == 'Ghana'","set":{"wins":2}}"#, store: store) },
            { try self.apply(#"{"op":"insert","entity":"Team","values":{"teamName":"Atlantis","qualifyingZone":"Oceania"}}"#, store: store) },
            { try self.sqlite(store, "UPDATE Team SET wins = 5 WHERE teamName = 'Ghana'") },
            { try self.sqlite(store, "UPDATE Team SET wins = 7 WHERE teamName = 'Japan'") },
            { try self.sqlite(store, "DELETE FROM Team WHERE qualifyingZone = 'Oceania'") },
        ]
        for (number, write) in writes.enumerated() {
            try write()
            let line = try lines.waitFor(number + 2)[number + 1]
            let changes = try XCTUnwrap(line["changes"] as? [[String: Any]], "write \(number + 1): \(line)")
            XCTAssertFalse(changes.isEmpty, "write \(number + 1) shows in the list")
            let next = try sectionCounts(line)
            try checkBatch(changes, from: sections, to: next, write: number + 1)
            sections = next
        }
        let dump = try JSONSerialization.jsonObject(with: Data(run(["dump", "--dataset", "worldcup", "--store", store]).output.utf8)) as! [String: Any]
        let fresh = (dump["sections"] as! [[String: Any]]).map { ($0["name"] as! String, ($0["objects"] as! [Any]).count) }
        XCTAssertEqual(sections.map(\.0), fresh.map(\.0))
        XCTAssertEqual(sections.map(\.1), fresh.map(\.1))

        watcher.interrupt()
        watcher.waitUntilExit()
        XCTAssertEqual(watcher.terminationStatus, 0, "SIGINT ends the watcher normally")
    }

    private func apply(_ operation: String, store: String) throws {
        let result = try run(["apply", "--dataset", "worldcup", "--store", store], input: operation + "\n{\"op\":\"save\"}\n")
        XCTAssertEqual(result.status, 0, result.errors)
    }

    private func sqlite(_ store: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [store, sql]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, sql)
    }
}
