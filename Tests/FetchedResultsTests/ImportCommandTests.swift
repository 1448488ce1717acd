import Datasets
import Foundation
import XCTest

/// `fetched-results import`, run as a person runs it: real files, a temporary store,
/// interrupted and killed imports run again.
final class ImportCommandTests: XCTestCase {
    private var folder: URL!
    private var store: String { folder.appendingPathComponent("store.sqlite").path }

    override func setUpWithError() throws {
        folder = try temporaryFolder(self)
    }

    private var executable: URL { builtExecutable("fetched-results", besides: ImportCommandTests.self) }

    private func makeProcess(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = folder.path
        process.environment = environment
        return process
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let process = makeProcess(arguments)
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let errors = Collected(stderr.fileHandleForReading)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), errors.waitForEnd())
    }

    private func importTeams(_ file: URL, _ extra: [String] = []) throws -> (status: Int32, output: String, errors: String) {
        try run(["import", "--dataset", "worldcup", "--store", store] + extra + [file.path])
    }

    /// A CSV file of teams `Imported 1`, `Imported 2`...: team n on line n + 1.
    private func writeTeams(_ count: Int, name: String = "teams.csv", wins: (Int) -> String = { String($0 % 5) }) throws -> URL {
        let url = folder.appendingPathComponent(name)
        var text = "teamName,qualifyingZone,wins\n"
        for number in 1...count { text += "Imported \(number),Zone \(number % 6),\(wins(number))\n" }
        try Data(text.utf8).write(to: url)
        return url
    }

    /// How many imported teams the store holds, and how many distinct names they have.
    private func importedTeams() throws -> (rows: Int, names: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [store, "SELECT COUNT(*) || ' ' || COUNT(DISTINCT teamName) FROM Team WHERE teamName LIKE 'Imported %'"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let numbers = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard numbers.count == 2 else { throw CocoaError(.fileReadCorruptFile) }
        return (numbers[0], numbers[1])
    }

    func testImportsIntoTheDatasetsListEntityWithProgressOnStandardError() throws {
        let file = folder.appendingPathComponent("items.csv")
        var text = "name,done,created,list\n"
        let lists = ["Groceries", "Home", "Work"]
        for number in 1...2_500 {
            text += "\"Item \(number), imported\",\(number % 2 == 0 ? "yes" : "no"),2026-11-07,\(lists[number % 3])\n"
        }
        try Data(text.utf8).write(to: file)

        let result = try run(["import", "--dataset", "todo", "--store", store, "--chunk-size", "1000", file.path])
        XCTAssertEqual(result.status, 0, result.errors)
        XCTAssertTrue(result.output.hasPrefix("Imported 2,500 records into Item from \(file.path) in "), result.output)
        let progress = result.errors.split(separator: "\n")
        XCTAssertEqual(progress.count, 3, "a line per tenth of the file when standard error is no terminal: \(result.errors)")
        XCTAssertTrue(progress[0].hasPrefix("Importing items.csv: 1,001 of ~2,"), result.errors)
        XCTAssertTrue(progress[0].hasSuffix("1,000 records"), result.errors)
        XCTAssertEqual(progress.last, "Importing items.csv: 2,501 of ~2,501 lines (100%), 2,500 records")

        let dump = try run(["dump", "--dataset", "todo", "--store", store])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(dump.output.utf8)) as? [String: Any])
        let sections = try XCTUnwrap(json["sections"] as? [[String: Any]])
        let work = try XCTUnwrap(sections.first { $0["name"] as? String == "Work" || $0["title"] as? String == "Work" })
        let names = try XCTUnwrap(work["objects"] as? [[String: Any]]).compactMap { ($0["values"] as? [String: Any])?["name"] as? String }
        XCTAssertEqual(names.filter { $0.hasSuffix(", imported") }.count, 833, "items land in the list their list column names")
    }

    func testABadLineExitsWithItsPlaceAndTheSameCommandResumesThere() throws {
        let file = try writeTeams(1_000, wins: { $0 == 501 ? "abc" : "1" })
        let bad = try importTeams(file, ["--chunk-size", "200"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.errors.contains("\(file.path):502: wins: 'abc' is not an integer; fix the line and import again to resume there\n"), bad.errors)
        XCTAssertTrue(bad.errors.contains("500 records of \(file.path) are imported, through line 501; run the same command again to resume at line 502."), bad.errors)
        XCTAssertEqual(try importedTeams().rows, 500)

        try Data(String(decoding: Data(contentsOf: file), as: UTF8.self).replacingOccurrences(of: ",abc\n", with: ",3\n").utf8).write(to: file)
        let resumed = try importTeams(file, ["--chunk-size", "200"])
        XCTAssertEqual(resumed.status, 0, resumed.errors)
        XCTAssertTrue(resumed.output.contains("Imported 500 records into Team"), resumed.output)
        XCTAssertTrue(resumed.output.contains("resuming at line 502 (1,000 records in all)."), resumed.output)
        XCTAssertEqual(try importedTeams().rows, 1_000)
        XCTAssertEqual(try importedTeams().names, 1_000)

        let again = try importTeams(file)
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.errors.contains("\(file.path): already imported into Team completely (1000 records); importing it again would add every record a second time. To do that anyway, start over with restart (--restart)"), again.errors)
        let restarted = try importTeams(file, ["--restart"])
        XCTAssertEqual(restarted.status, 0, restarted.errors)
        XCTAssertEqual(try importedTeams().rows, 2_000, "--restart imports every record again, keeping the rows already imported")
    }

    func testUnknownColumnsAndFilesThatCannotBeImportedAreRefusedByName() throws {
        let colours = folder.appendingPathComponent("colours.csv")
        try Data("teamName,qualifyingZone,colour\nAtlantis,Oceania,blue\n".utf8).write(to: colours)
        let unknown = try importTeams(colours)
        XCTAssertEqual(unknown.status, 1)
        XCTAssertEqual(unknown.errors, "\(colours.path):1: colour: Team has no attribute or to-one relationship 'colour'; Team takes teamName, qualifyingZone, imageName, wins; nothing was imported\n")

        let missing = try importTeams(folder.appendingPathComponent("missing.csv"))
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.errors, "\(folder.appendingPathComponent("missing.csv").path): no such file; check the path\n")

        let text = try writeTeams(3, name: "teams.txt")
        let noFormat = try importTeams(text)
        XCTAssertEqual(noFormat.status, 1)
        XCTAssertTrue(noFormat.errors.hasPrefix("\(text.path): cannot tell the format from the file's extension ('txt')"), noFormat.errors)
        let asCSV = try importTeams(text, ["--format", "csv"])
        XCTAssertEqual(asCSV.status, 0, asCSV.errors)
        XCTAssertEqual(try importedTeams().rows, 3)

        let csvAsJSON = try writeTeams(3, name: "other.csv")
        let notJSON = try importTeams(csvAsJSON, ["--format", "jsonl"])
        XCTAssertEqual(notJSON.status, 1)
        XCTAssertTrue(notJSON.errors.hasPrefix("\(csvAsJSON.path):1: not valid JSON (teamName,qualifyingZone,wins); write one JSON object per line"), notJSON.errors)

        let zero = try importTeams(text, ["--chunk-size", "0"])
        XCTAssertNotEqual(zero.status, 0)
        XCTAssertTrue(zero.errors.contains("--chunk-size must be at least 1"), zero.errors)
    }

    func testCtrlCCommitsWhatWasReadAndTheSameCommandResumes() throws {
        let file = try writeTeams(60_000)
        let (status, errors) = try startImport(file, thenSend: SIGINT)
        XCTAssertEqual(status, 130, errors)
        XCTAssertTrue(errors.contains("Interrupted after line "), errors)
        XCTAssertTrue(errors.contains("Run the same command again to resume at line "), errors)
        let kept = try importedTeams().rows
        XCTAssertGreaterThan(kept, 0)
        XCTAssertLessThan(kept, 60_000, "interrupted before the end")
        XCTAssertTrue(errors.contains("resume at line \(grouped(kept + 2))."), "the message names the next line: \(errors)")

        let resumed = try importTeams(file, ["--chunk-size", "5000"])
        XCTAssertEqual(resumed.status, 0, resumed.errors)
        XCTAssertTrue(resumed.output.contains("resuming at line \(grouped(kept + 2)) (60,000 records in all)"), resumed.output)
        XCTAssertEqual(try importedTeams().rows, 60_000)
        XCTAssertEqual(try importedTeams().names, 60_000)
    }

    func testAKilledImportResumesWithoutLosingOrRepeatingRecords() throws {
        let file = try writeTeams(60_000)
        let (status, _) = try startImport(file, thenSend: SIGKILL)
        XCTAssertEqual(status, SIGKILL)
        let kept = try importedTeams().rows
        XCTAssertLessThan(kept, 60_000, "killed before the end")
        XCTAssertEqual(kept % 200, 0, "whole chunks only")

        let resumed = try importTeams(file, ["--chunk-size", "5000"])
        XCTAssertEqual(resumed.status, 0, resumed.errors)
        XCTAssertTrue(resumed.output.contains("resuming at line \(grouped(kept + 2))"), resumed.output)
        XCTAssertEqual(try importedTeams().rows, 60_000)
        XCTAssertEqual(try importedTeams().names, 60_000)
    }

    /// Starts importing `file` in chunks of 200, sends `signal` once the first chunk is
    /// reported, and returns how the process ended and what it wrote on standard error.
    private func startImport(_ file: URL, thenSend signal: Int32) throws -> (status: Int32, errors: String) {
        XCTAssertEqual(try run(["dump", "--dataset", "worldcup", "--store", store]).status, 0, "creates and seeds the store")
        let process = makeProcess(["import", "--dataset", "worldcup", "--store", store, "--chunk-size", "200", file.path])
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let errors = Collected(stderr.fileHandleForReading)
        XCTAssertTrue(errors.wait(for: "Importing teams.csv"), "the import reports its first chunk")
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return (process.terminationStatus, errors.waitForEnd())
    }

    /// `12,345`, as the command writes numbers.
    private func grouped(_ number: Int) -> String {
        let digits = Array(String(number))
        return digits.enumerated().map { index, digit in
            index > 0 && (digits.count - index) % 3 == 0 ? ",\(digit)" : "\(digit)"
        }.joined()
    }
}

/// What a process writes to a pipe, collected as it comes.
private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var ended = false

    init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            guard let self else { return }
            self.lock.withLock {
                if chunk.isEmpty {
                    self.ended = true
                    handle.readabilityHandler = nil
                } else {
                    self.data.append(chunk)
                }
            }
        }
    }

    private var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

    /// Waits up to 60 s for `text` to appear.
    func wait(for expected: String) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if text.contains(expected) { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// Everything written, once the writer closed the pipe (up to 10 s).
    func waitForEnd() -> String {
        let deadline = Date().addingTimeInterval(10)
        while !lock.withLock({ ended }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return text
    }
}
