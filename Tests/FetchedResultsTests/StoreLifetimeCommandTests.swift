import Foundation
import Synchronization
import XCTest

/// What happens to a store across processes: opened by several at once, killed while it is
/// created, written by two at once, emptied by its user. The real `fetched-results` binary
/// and real SQLite files, as a person runs them.
final class StoreLifetimeCommandTests: XCTestCase {
    private var executable: URL { builtExecutable("fetched-results", besides: StoreLifetimeCommandTests.self) }

    override class func setUp() {
        // A command that ends before reading its input must fail its test, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
    }

    private func start(_ arguments: [String], input: String? = nil) throws -> (Process, Pipe, Pipe) {
        let (process, stdin, stdout, stderr) = try startKeepingInputOpen(arguments)
        if let input { try stdin.write(contentsOf: Data(input.utf8)) }
        try stdin.close()
        return (process, stdout, stderr)
    }

    /// The command started with its standard input left open, for a test that writes it as
    /// a driving program would; terminated at the end of the test if still running.
    private func startKeepingInputOpen(_ arguments: [String]) throws -> (Process, input: FileHandle, output: Pipe, errors: Pipe) {
        let started = try startProcess(executable, arguments)
        addTeardownBlock { if started.process.isRunning { started.process.terminate() } }
        return started
    }

    /// Runs the command to its end: its status, standard output and standard error.
    private func run(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String, errors: String) {
        let (process, stdout, stderr) = try start(arguments, input: input)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    /// The number of teams `dump` lists (it opens the store, and seeds it when new).
    private func dumpedTeams(_ store: URL, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let result = try run(["dump", "--dataset", "worldcup", "--store", store.path])
        XCTAssertEqual(result.status, 0, result.errors, file: file, line: line)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], file: file, line: line)
        let sections = try XCTUnwrap(json["sections"] as? [[String: Any]], file: file, line: line)
        return sections.reduce(0) { $0 + (($1["objects"] as? [Any])?.count ?? 0) }
    }

    func testAStoreEmptiedByItsUserStaysEmpty() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite")
        XCTAssertEqual(try dumpedTeams(store), 32)
        let deleted = try run(["apply", "--dataset", "worldcup", "--store", store.path],
                              input: "{\"op\":\"delete\",\"entity\":\"Team\",\"where\":\"wins >= 0\"}\n{\"op\":\"save\"}\n")
        XCTAssertEqual(deleted.status, 0, deleted.errors)
        XCTAssertEqual(try dumpedTeams(store), 0, "opening an emptied store seeded it again")
        XCTAssertEqual(try dumpedTeams(store), 0)
        // Emptied by another program (the sqlite3 shell) too.
        let other = try temporaryFolder(self).appendingPathComponent("other.sqlite")
        XCTAssertEqual(try dumpedTeams(other), 32)
        try sqlite3(other, "DELETE FROM Team")
        XCTAssertEqual(try dumpedTeams(other), 0)
    }

    func testFirstOpensKilledAtRandomMomentsLeaveAStoreThatOpens() throws {
        let seed = SeededGenerator.seed()
        var random = SeededGenerator(seed: seed)
        let folder = try temporaryFolder(self)
        for round in 0..<30 {
            let store = folder.appendingPathComponent("cup-\(round).sqlite")
            let (process, _, _) = try start(["dump", "--dataset", "worldcup", "--store", store.path])
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.12, using: &random))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let context = "seed \(seed) (replay with SEED=\(seed)), round \(round)"
            XCTAssertEqual(try dumpedTeams(store), 32, context)
        }
    }

    func testProcessesOpeningANewStoreAtOnceCreateAndSeedItOnce() throws {
        let folder = try temporaryFolder(self)
        for round in 0..<5 {
            let store = folder.appendingPathComponent("cup-\(round).sqlite")
            let processes = try (0..<4).map { _ in try start(["dump", "--dataset", "worldcup", "--store", store.path]) }
            for (process, stdout, stderr) in processes {
                _ = stdout.fileHandleForReading.readDataToEndOfFile()
                let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                XCTAssertEqual(process.terminationStatus, 0, "round \(round): \(errors)")
            }
            XCTAssertEqual(try sqlite3(store, "SELECT COUNT(*) FROM Team"), "32", "round \(round)")
        }
    }

    func testTwoProcessesSavingAtOnceLoseNoSave() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite")
        XCTAssertEqual(try dumpedTeams(store), 32)
        let saves = 150
        func input(_ team: String) -> String {
            (1...saves).map { wins in
                "{\"op\":\"update\",\"entity\":\"Team\",\"where\":\"teamName == '\(team)'\",\"set\":{\"wins\":\(wins)}}\n{\"op\":\"save\"}\n"
            }.joined()
        }
        let ghana = try start(["apply", "--dataset", "worldcup", "--store", store.path], input: input("Ghana"))
        let brazil = try start(["apply", "--dataset", "worldcup", "--store", store.path], input: input("Brazil"))
        // The sqlite3 shell writes too, holding the lock for a while each time.
        for _ in 0..<5 {
            try sqlite3(store, "BEGIN IMMEDIATE; UPDATE Team SET wins = wins + 1 WHERE teamName = 'Japan'; SELECT COUNT(*) FROM Team t1, Team t2, Team t3, Team t4; COMMIT;")
        }
        for (name, (process, stdout, stderr)) in [("Ghana", ghana), ("Brazil", brazil)] {
            let lines = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
            let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, "\(name): \(errors)")
            XCTAssertEqual(lines.count, saves, "\(name): one batch line per save")
        }
        XCTAssertEqual(try sqlite3(store, "SELECT wins FROM Team WHERE teamName IN ('Brazil', 'Ghana', 'Japan') ORDER BY teamName"), "\(saves)\n\(saves)\n5")
    }

    func testASaveThatFindsTheStoreLockedKeepsTheEditsForTheNextSave() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite")
        XCTAssertEqual(try dumpedTeams(store), 32)
        let (process, input, output, errors) = try startKeepingInputOpen(["apply", "--dataset", "worldcup", "--store", store.path, "--busy-timeout", "0.1"])
        Thread.sleep(forTimeInterval: 1)  // opened, waiting for its input
        let holder = try sqlite3HoldingWriteLock(of: store, running: "UPDATE Team SET wins = 7 WHERE teamName = 'Japan'", for: 1.5)
        try input.write(contentsOf: Data("{\"op\":\"update\",\"entity\":\"Team\",\"where\":\"teamName == 'Ghana'\",\"set\":{\"wins\":3}}\n{\"op\":\"save\"}\n".utf8))
        holder.waitUntilExit()
        try input.write(contentsOf: Data("{\"op\":\"save\"}\n".utf8))
        try input.close()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 1, "the refused save is a bad line")
        XCTAssertTrue(message.contains("line 2: not saved"), message)
        XCTAssertTrue(message.contains("the next save writes them"), message)
        XCTAssertFalse(message.contains("discarded"), message)
        XCTAssertEqual(lines.count, 1, "the second save printed its batch")
        XCTAssertEqual(try sqlite3(store, "SELECT wins FROM Team WHERE teamName IN ('Ghana', 'Japan') ORDER BY teamName"), "3\n7")
    }

    func testApplyWritesEachBatchLineAsItSavesEvenIntoAPipe() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite")
        XCTAssertEqual(try dumpedTeams(store), 32)
        let (process, input, output, _) = try startKeepingInputOpen(["apply", "--dataset", "worldcup", "--store", store.path])
        // A driving program: one save, then it waits for the batch before writing more.
        try input.write(contentsOf: Data("{\"op\":\"update\",\"entity\":\"Team\",\"where\":\"teamName == 'Ghana'\",\"set\":{\"wins\":3}}\n{\"op\":\"save\"}\n".utf8))
        let line = DispatchSemaphore(value: 0)
        let received = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            received.withLock { $0 += text }
            if text.contains("\n") { line.signal() }
        }
        XCTAssertEqual(line.wait(timeout: .now() + 10), .success, "the batch line came while the input was still open")
        output.fileHandleForReading.readabilityHandler = nil
        XCTAssertTrue(received.withLock { $0 }.contains("\"changes\""), received.withLock { $0 })
        try input.close()
        process.waitUntilExit()
    }

    func testInputThatIsNotUTF8IsRefusedWithItsLineAndByteAndNothingOfItIsSaved() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite")
        XCTAssertEqual(try dumpedTeams(store), 32)
        var input = Data("{\"op\":\"update\",\"entity\":\"Team\",\"where\":\"teamName == 'Ghana'\",\"set\":{\"teamName\":\"Gh".utf8)
        input.append(contentsOf: [0xFF, 0xFE])   // not UTF-8: readLine made these U+FFFD and saved them
        input.append(Data("ana\"}}\n{\"op\":\"update\",\"entity\":\"Team\",\"where\":\"teamName == 'Ghana'\",\"set\":{\"wins\":4}}\n{\"op\":\"save\"}\n".utf8))
        let (process, stdin, stdout, stderr) = try startKeepingInputOpen(["apply", "--dataset", "worldcup", "--store", store.path])
        try stdin.write(contentsOf: input)
        try stdin.close()
        _ = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 1)
        XCTAssertTrue(errors.contains("line 1: not UTF-8 text at byte 83 of the line"), errors)
        XCTAssertEqual(try sqlite3(store, "SELECT teamName || ' ' || wins FROM Team WHERE teamName LIKE 'Gh%'"), "Ghana 4",
                       "the bad line changed nothing; the lines after it were applied")
    }

    func testAfterAConflictARefreshLetsTheSameEditBeSaved() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite")
        XCTAssertEqual(try dumpedTeams(store), 32)
        let (process, input, output, errors) = try startKeepingInputOpen(["apply", "--dataset", "worldcup", "--store", store.path])
        let lines = Mutex(""), problems = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            lines.withLock { $0 += text }
        }
        errors.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            problems.withLock { $0 += text }
        }
        func send(_ line: String) throws { try input.write(contentsOf: Data((line + "\n").utf8)) }
        func waitFor(_ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while !condition() { if Date() > deadline { return false }; usleep(20_000) }
            return true
        }
        let ghana = "{\"op\":\"update\",\"entity\":\"Team\",\"where\":\"teamName == 'Ghana'\",\"set\":{\"qualifyingZone\":\"Europe\"}}"
        try send(ghana)                      // loads Ghana (in Africa) and edits it
        try send("{\"op\":\"bogus\"}")
        XCTAssertTrue(waitFor { problems.withLock { $0 }.contains("line 2") }, problems.withLock { $0 })
        try sqlite3(store, "UPDATE Team SET qualifyingZone = 'Asia' WHERE teamName = 'Ghana'")   // another writer
        try send("{\"op\":\"save\"}")
        XCTAssertTrue(waitFor { problems.withLock { $0 }.contains("line 3") }, problems.withLock { $0 })
        // Again: a second try without a refresh is refused the same way; after one, it saves.
        try send(ghana)
        try send("{\"op\":\"refresh\"}")
        try send(ghana)
        try send("{\"op\":\"save\"}")
        XCTAssertTrue(waitFor { lines.withLock { $0 }.contains("\n") }, "the save after the refresh printed its batch; errors: \(problems.withLock { $0 })")
        try input.close()
        process.waitUntilExit()
        let said = problems.withLock { $0 }
        XCTAssertTrue(said.contains("line 2: unknown op \"bogus\"; use insert, update, delete, save or refresh"), said)
        XCTAssertTrue(said.contains("line 3: cannot save: Team/"), said)
        XCTAssertTrue(said.contains("send {\"op\":\"refresh\"} to load what the store holds now"), said)
        XCTAssertFalse(said.contains(".editWins"), "the advice names only what apply offers: \(said)")
        XCTAssertFalse(said.contains("line 7"), "the save after the refresh succeeded: \(said)")
        XCTAssertEqual(try sqlite3(store, "SELECT qualifyingZone FROM Team WHERE teamName = 'Ghana'"), "Europe")
    }

    /// Two `apply` processes adding to the same team 500 times each, saving after every add:
    /// wins are a counter, so no save is refused and the store holds all 1,000.
    func testTwoProcessesAddingToOneCounterLoseNoAdd() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite")
        XCTAssertEqual(try dumpedTeams(store), 32)
        let adds = String(repeating: "{\"op\":\"update\",\"entity\":\"Team\",\"where\":\"teamName == 'Ghana'\",\"add\":{\"wins\":1}}\n{\"op\":\"save\"}\n", count: 500)
        let processes = try (0..<2).map { _ in try start(["apply", "--dataset", "worldcup", "--store", store.path], input: adds) }
        for (process, stdout, stderr) in processes {
            _ = stdout.fileHandleForReading.readDataToEndOfFile()
            let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, errors)
            XCTAssertEqual(errors, "", "no save refused")
        }
        XCTAssertEqual(try sqlite3(store, "SELECT wins FROM Team WHERE teamName = 'Ghana'"), "1000")
    }

    /// A 10 MB line is read in well under a second (a line is searched and checked once),
    /// and a line over the limit is refused with its length, while the lines after it apply.
    func testALongLineIsReadQuicklyAndOneOverTheLimitIsRefusedSayingWhy() throws {
        let store = try temporaryFolder(self).appendingPathComponent("cup.sqlite")
        let name = String(repeating: "x", count: 10_000_000)
        let tooLong = String(repeating: " ", count: 70 << 20)
        // A 10 MB text in the line's predicate (a stored text may be at most 100 characters).
        let input = "{\"op\":\"update\",\"entity\":\"Team\",\"where\":\"teamName == 'Ghana' OR imageName == '\(name)'\",\"add\":{\"wins\":1}}\n"
            + tooLong + "\n{\"op\":\"update\",\"entity\":\"Team\",\"where\":\"teamName == 'Japan'\",\"add\":{\"wins\":2}}\n{\"op\":\"save\"}\n"
        let result = try run(["apply", "--dataset", "worldcup", "--store", store.path], input: input)
        XCTAssertEqual(result.status, 1, "a bad line makes the exit status 1")
        XCTAssertTrue(result.errors.contains("line 2: the line is \(70 << 20) bytes long, more than the 67108864 bytes (64 MiB) a line may have"), result.errors)
        XCTAssertEqual(try sqlite3(store, "SELECT wins FROM Team WHERE teamName = 'Ghana'"), "1", "the long line applied")
        XCTAssertEqual(try sqlite3(store, "SELECT wins FROM Team WHERE teamName = 'Japan'"), "2")
    }
}
