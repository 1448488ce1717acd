import Foundation
import ObjectStore
import XCTest

/// Chunks, merges, and what happens when an import stops: bad records, cancel, changed files.
final class ResumableImportTests: XCTestCase {
    private var folder: URL!
    private var store: PersistentStore!

    override func setUpWithError() throws {
        folder = try temporaryFolder(self)
        store = try ImportFixtures.store(Fixtures.worldCupModel(), in: folder)
    }

    private func teams(_ csv: String) throws -> URL {
        try ImportFixtures.write(csv, to: "teams.csv", in: folder)
    }

    private func importer(_ file: URL, chunkSize: Int = 1000, restart: Bool = false) throws -> ObjectImporter {
        try ObjectImporter(store: store, entityName: "Team", file: file, chunkSize: chunkSize, restart: restart)
    }

    private func expectedNames(_ count: Int) -> [String] { (1...count).map { "Team \($0)" } }

    func testChunksCommitOneByOneAndAnotherContextMergesEach() throws {
        let file = try teams(ImportFixtures.teamsCSV(2_500))
        let queue = DispatchQueue(label: "viewer")
        let viewer = ObjectContext(store: store, queue: queue)
        var merged: [Int] = []
        let token = queue.sync { viewer.addObserver { event in
            if case .objectsDidChange(let changes) = event { merged.append(changes.inserted.count) }
        } }
        let reports = Locked<[ImportProgress]>([])
        let result = try importer(file).run { progress in reports.withLock { $0.append(progress) } }
        queue.sync {}  // the merges were queued as the chunks committed
        token.cancel()

        XCTAssertEqual(result, ImportResult(outcome: .finished, recordsImported: 2_500, totalRecordsImported: 2_500, resumedAtLine: nil, nextLine: 2_502))
        XCTAssertEqual(merged, [1_000, 1_000, 500], "one merge per chunk")
        let progress = reports.withLock { $0 }
        XCTAssertEqual(progress.map(\.recordsImported), [1_000, 2_000, 2_500])
        XCTAssertEqual(progress.map(\.line), [1_001, 2_001, 2_501])
        XCTAssertEqual(progress.last?.bytesRead, progress.last?.totalBytes)
        XCTAssertEqual(progress.last?.fractionCompleted, 1)
        XCTAssertLessThan(progress[0].fractionCompleted, progress[1].fractionCompleted)
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(2_500))
    }

    /// A window's import starts with small chunks that grow by half up to the chunk size: a
    /// list gets its first rows sooner, a few at a time while they land among those on screen.
    func testFirstChunksAreSmallAndGrowToTheChunkSize() throws {
        let file = try teams(ImportFixtures.teamsCSV(5_000))
        let reports = Locked<[ImportProgress]>([])
        let importer = try ObjectImporter(store: store, entityName: "Team", file: file, chunkSize: 1_000, firstChunkSize: 25)
        let result = try importer.run { progress in reports.withLock { $0.append(progress) } }
        XCTAssertEqual(result.recordsImported, 5_000)
        let totals = reports.withLock { $0 }.map(\.recordsImported)
        let sizes = zip(totals, [0] + totals).map { $0 - $1 }
        XCTAssertEqual(Array(sizes.prefix(4)), [25, 38, 57, 86])
        for (previous, size) in zip(sizes, sizes.dropFirst().dropLast()) {
            XCTAssertEqual(size, min(1_000, previous + (previous + 1) / 2), "chunks \(sizes)")
        }
        XCTAssertEqual(sizes.dropLast().last, 1_000, "they reach the chunk size: \(sizes)")
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(5_000))
    }

    func testABadRecordKeepsTheRecordsBeforeItAndTheFixedFileResumesAtIt() throws {
        let csv = ImportFixtures.teamsCSV(2_500) { $0 == 1_501 ? "abc" : String($0 % 7) }
        let file = try teams(csv)
        let reports = Locked<[ImportProgress]>([])
        let error = try XCTUnwrap(ImportFixtures.importError { try importer(file).run { progress in reports.withLock { $0.append(progress) } } })
        XCTAssertEqual(error.kind, .badRecord)
        XCTAssertEqual(error.line, 1_502)
        XCTAssertEqual(error.field, "wins")
        XCTAssertEqual(error.description, "teams.csv:1502: wins: 'abc' is not an integer; fix the line and import again to resume there")
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(1_500), "the good records of the chunk with the bad one are committed")
        XCTAssertEqual(reports.withLock { $0.last?.recordsImported }, 1_500)

        try Data(csv.replacingOccurrences(of: "Team 1501,Zone 1,abc", with: "Team 1501,Zone 1,4").utf8).write(to: file)
        let result = try importer(file).run()
        XCTAssertEqual(result, ImportResult(outcome: .finished, recordsImported: 1_000, totalRecordsImported: 2_500, resumedAtLine: 1_502, nextLine: 2_502))
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(2_500), "every record exactly once")
        XCTAssertEqual(try ImportFixtures.rows(store, "Team", ["wins"])[1_500], [.integer(4)], "the fixed line was read again")
    }

    func testABadFirstRecordImportsNothingAndResumesAtIt() throws {
        let file = try teams("teamName,qualifyingZone,wins\nA,Europe,-1\nB,Europe,2\n")
        let error = try XCTUnwrap(ImportFixtures.importError { try importer(file).run() })
        XCTAssertEqual(error.line, 2)
        XCTAssertEqual(error.field, "wins")
        XCTAssertEqual(error.message, "must be at least 0 (is -1); fix the line and import again to resume there")
        try Data("teamName,qualifyingZone,wins\nA,Europe,1\nB,Europe,2\n".utf8).write(to: file)
        let result = try importer(file).run()
        XCTAssertEqual(result.resumedAtLine, 2)
        XCTAssertEqual(try ImportFixtures.teamNames(store), ["A", "B"])
    }

    func testCancelCommitsWhatWasReadAndTheNextRunResumesWithoutDuplicates() throws {
        let file = try teams(ImportFixtures.teamsCSV(2_500))
        let first = try importer(file)
        let cancelled = try first.run { _ in first.cancel() }
        XCTAssertEqual(cancelled, ImportResult(outcome: .cancelled, recordsImported: 1_000, totalRecordsImported: 1_000, resumedAtLine: nil, nextLine: 1_002))
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(1_000))

        let resumed = try importer(file).run()
        XCTAssertEqual(resumed, ImportResult(outcome: .finished, recordsImported: 1_500, totalRecordsImported: 2_500, resumedAtLine: 1_002, nextLine: 2_502))
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(2_500))
    }

    func testCancelMidChunkFromAnotherThreadStopsAfterTheCurrentRecord() throws {
        let file = try teams(ImportFixtures.teamsCSV(20_000))
        let importer = try importer(file, chunkSize: 100_000)
        importer.cancel()
        let result = try importer.run()
        XCTAssertEqual(result.outcome, .cancelled, "a run started after cancel() stops at once")
        XCTAssertEqual(result.recordsImported, 0)
        XCTAssertEqual(result.nextLine, 2)

        let second = try self.importer(file, chunkSize: 100_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { second.cancel() }
        let partial = try second.run()
        XCTAssertEqual(partial.outcome, .cancelled)
        XCTAssertGreaterThan(partial.recordsImported, 0, "the records read before cancel() are committed")
        XCTAssertLessThan(partial.recordsImported, 20_000)
        XCTAssertEqual(partial.nextLine, partial.recordsImported + 2)
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(partial.recordsImported))
        _ = try self.importer(file).run()
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(20_000))
    }

    func testAChangedImportedPartIsRefusedAndRestartReadsTheFileAgain() throws {
        let csv = ImportFixtures.teamsCSV(2_500)
        let file = try teams(csv)
        let first = try importer(file)
        _ = try first.run { _ in first.cancel() }

        try Data(csv.replacingOccurrences(of: "Team 5,", with: "Team Five,").utf8).write(to: file)
        let changed = try XCTUnwrap(ImportFixtures.importError { try importer(file).run() })
        XCTAssertEqual(changed.kind, .fileChanged)
        XCTAssertEqual(changed.message, "its first 1001 lines changed since an import of them into Team stopped (1000 records were imported), so it cannot resume after them. To import the whole file again, start over with restart (--restart); the rows already imported stay, delete them first if the file replaces them")
        try Data(csv.prefix(100).utf8).write(to: file)
        XCTAssertEqual(ImportFixtures.importError { try importer(file).run() }?.kind, .fileChanged, "a file cut short is changed too")
        XCTAssertEqual(try ImportFixtures.teamNames(store).count, 1_000, "nothing was imported by the refused runs")

        try Data(csv.utf8).write(to: file)
        let restarted = try importer(file, restart: true).run()
        XCTAssertEqual(restarted, ImportResult(outcome: .finished, recordsImported: 2_500, totalRecordsImported: 2_500, resumedAtLine: nil, nextLine: 2_502))
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(1_000) + expectedNames(2_500), "restart keeps the rows already imported")
    }

    func testAFinishedImportIsRefusedUnlessRestarted() throws {
        let file = try teams(ImportFixtures.teamsCSV(10))
        _ = try importer(file).run()
        let again = try XCTUnwrap(ImportFixtures.importError { try importer(file).run() })
        XCTAssertEqual(again.kind, .alreadyImported)
        XCTAssertEqual(again.message, "already imported into Team completely (10 records); importing it again would add every record a second time. To do that anyway, start over with restart (--restart)")
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(10))

        let restarted = try importer(file, restart: true).run()
        XCTAssertEqual(restarted.recordsImported, 10)
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(10) + expectedNames(10))
        XCTAssertEqual(ImportFixtures.importError { try importer(file).run() }?.kind, .alreadyImported)
    }

    func testTheJournalIsKeyedByTheStandardizedPathAndTheEntity() throws {
        let file = try teams(ImportFixtures.teamsCSV(10))
        _ = try importer(file).run()
        let roundabout = folder.appendingPathComponent("sub/../teams.csv")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
        XCTAssertEqual(ImportFixtures.importError { try importer(roundabout).run() }?.kind, .alreadyImported)
    }

    func testAnImportThatCommitsWhileAnotherRunsMakesTheOtherStopWithoutDuplicates() throws {
        let file = try teams(ImportFixtures.teamsCSV(2_500))
        let slow = try importer(file)
        let fast = try importer(file)
        let fastResult = Locked<ImportResult?>(nil)
        let error = try XCTUnwrap(ImportFixtures.importError {
            try slow.run { progress in
                // After the slow one's first chunk, another import of the file runs to the end.
                if progress.recordsImported == 1_000, fastResult.withLock({ $0 }) == nil {
                    let result = try? fast.run()
                    fastResult.withLock { $0 = result }
                }
            }
        })
        XCTAssertEqual(error.kind, .saveFailed)
        XCTAssertTrue(error.message.hasPrefix("another import of this file into Team committed while this one ran"), error.message)
        XCTAssertEqual(fastResult.withLock { $0 }?.resumedAtLine, 1_002)
        XCTAssertEqual(try ImportFixtures.teamNames(store), expectedNames(2_500))
    }

    func testFilesThatCannotBeReadAreNamed() throws {
        let missing = folder.appendingPathComponent("missing.csv")
        let error = try XCTUnwrap(ImportFixtures.importError { try importer(missing) })
        XCTAssertEqual(error.kind, .unreadableFile)
        XCTAssertEqual(error.description, "missing.csv: no such file; check the path")

        let text = try ImportFixtures.write("teamName,qualifyingZone\n", to: "teams.txt", in: folder)
        let unknown = try XCTUnwrap(ImportFixtures.importError { try importer(text) })
        XCTAssertEqual(unknown.message, "cannot tell the format from the file's extension ('txt'); name it .csv, .jsonl, .ndjson or .json, or give the format (csv or JSON lines)")
        let csv = try ObjectImporter(store: store, entityName: "Team", file: text, format: .csv)
        XCTAssertEqual(csv.format, .csv, "an explicit format wins over the extension")

        XCTAssertEqual(ImportFixtures.importError { try ObjectImporter(store: store, entityName: "Team", file: folder, format: .csv) }?.message,
                       "is a folder; give the CSV or JSON lines file to import")

        let binary = folder.appendingPathComponent("image.csv")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF]).write(to: binary)
        let notCSV = try XCTUnwrap(ImportFixtures.importError { try importer(binary) })
        XCTAssertEqual(notCSV.kind, .badHeader)
        XCTAssertEqual(notCSV.message, "the first row should name the columns, but field 1 is not UTF-8 text; save the file as UTF-8 (is this a CSV file?)")

        XCTAssertThrowsError(try ObjectImporter(store: store, entityName: "Player", file: text, format: .csv)) { error in
            XCTAssertTrue("\(error)".contains("no such entity"), "\(error)")
        }
    }
}
