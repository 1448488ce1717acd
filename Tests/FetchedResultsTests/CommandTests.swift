import Foundation
import XCTest

/// The `fetched-results` executable, run as a person runs it.
final class CommandTests: XCTestCase {
    private var executable: URL {
        // The tests run from the build folder that holds the executable too.
        let bundle = Bundle(for: CommandTests.self).bundleURL
        let candidates = [
            bundle.appendingPathComponent("fetched-results"),
            bundle.deletingLastPathComponent().appendingPathComponent("fetched-results"),
            URL(fileURLWithPath: #filePath).appendingPathComponent("../../../.build/debug/fetched-results").standardized,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    private func run(_ arguments: [String], input: String = "") throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = try temporaryFolder(self).path
        process.environment = environment
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    func testDumpPrintsSectionsAsJSON() throws {
        let result = try run(["dump", "--dataset", "movies"])
        XCTAssertEqual(result.status, 0, result.errors)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let sections = try XCTUnwrap(json["sections"] as? [[String: Any]])
        XCTAssertEqual(sections.map { $0["title"] as? String }, ["Shared", "Not Shared"])
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
        XCTAssertTrue(result.errors.contains("line 4: Team.wins: many is not an integer"), result.errors)
        XCTAssertTrue(result.errors.contains("line 6: not a JSON object"), result.errors)
        // What was saved stays: Ghana kept its two wins.
        let dump = try run(["dump", "--dataset", "worldcup", "--store", store])
        XCTAssertTrue(dump.output.contains(#""teamName":"Ghana","wins":2"#), dump.output)
    }
}
