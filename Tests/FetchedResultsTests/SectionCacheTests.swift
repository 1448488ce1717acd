import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// A controller with a cache name skips the query when nothing changed, and never shows
/// stale or damaged sections.
final class SectionCacheTests: XCTestCase {
    private typealias Team = WorldCup.Team
    private var savedDirectory: URL?
    private var cacheFolder: URL!

    override func setUpWithError() throws {
        savedDirectory = SectionCache.directory
        cacheFolder = try temporaryFolder(self)
        SectionCache.directory = cacheFolder
    }

    override func tearDown() {
        if let savedDirectory { SectionCache.directory = savedDirectory }
        super.tearDown()
    }

    private var cacheFile: URL { cacheFolder.appendingPathComponent("worldcup.frcache") }

    /// A store of ``WorldCup/teams`` logging its SQL, and a controller fetched with the cache
    /// `worldcup` (which writes it).
    private func openAndCache(_ folder: URL? = nil) throws -> (PersistentStore, ObjectContext, SQLLog, [SectionSnapshot]) {
        let log = SQLLog()
        let (store, context) = try WorldCup.open(in: folder ?? temporaryFolder(self), sqlLog: log)
        let first = WorldCup.controller(context, cacheName: "worldcup")
        log.reset()
        try first.performFetch()
        XCTAssertEqual(log.orderedReads(of: "Team").count, 1, "the first fetch queries")
        XCTAssertTrue(FileManager.default.fileExists(atPath: cacheFile.path), "and writes the cache")
        return (store, context, log, first.snapshot)
    }

    /// Fetches with the cache and checks the result against a fetch without it; returns
    /// whether the rows were queried (the cache was not used).
    private func fetchWithCache(_ context: ObjectContext, log: SQLLog, request: FetchRequest<Team> = WorldCup.request(),
                                file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        let controller = WorldCup.controller(context, request: request, cacheName: "worldcup")
        log.reset()
        try controller.performFetch()
        let queried = !log.orderedReads(of: "Team").isEmpty
        let fresh = try freshSnapshot { WorldCup.controller(context, request: request) }
        XCTAssertEqual(controller.snapshot, fresh, "the cached result differs from the data", file: file, line: line)
        return queried
    }

    func testASecondFetchOfUnchangedDataReadsTheCache() throws {
        let (_, context, log, first) = try openAndCache()
        let second = WorldCup.controller(context, cacheName: "worldcup")
        log.reset()
        try second.performFetch()
        XCTAssertEqual(log.orderedReads(of: "Team"), [], "no query for the rows")
        XCTAssertEqual(second.snapshot, first)
        XCTAssertEqual(second.sections?.map(\.name), ["Africa", "Asia", "Europe", "South America"])
        XCTAssertEqual(second.object(at: IndexPath(item: 0, section: 2)).teamName, "Spain")
    }

    func testTheCacheSurvivesTheStoreBeingClosedAndOpened() throws {
        let folder = try temporaryFolder(self)
        let first: [SectionSnapshot]
        do {
            let (_, _, _, snapshot) = try openAndCache(folder)
            first = snapshot
        }
        let log = SQLLog()
        let (_, context) = try WorldCup.open(in: folder, sqlLog: log)   // the next launch
        XCTAssertFalse(try fetchWithCache(context, log: log), "the cache is used")
        XCTAssertEqual(try freshSnapshot { WorldCup.controller(context) }, first)
    }

    func testASaveInvalidatesTheCache() throws {
        let (_, context, log, _) = try openAndCache()
        try WorldCup.team("France", in: context).wins = 9
        try context.save()
        XCTAssertTrue(try fetchWithCache(context, log: log))
        XCTAssertFalse(try fetchWithCache(context, log: log), "and the new cache is used next time")
    }

    func testARawSQLWriteInvalidatesTheCache() throws {
        let (store, context, log, _) = try openAndCache()
        try store.database.write { db in try db.execute(sql: "UPDATE \"Team\" SET wins = 9 WHERE teamName = 'France'") }
        XCTAssertTrue(try fetchWithCache(context, log: log))

        try store.database.write { db in try db.execute(sql: "DELETE FROM \"Team\" WHERE teamName = 'Japan'") }
        XCTAssertTrue(try fetchWithCache(context, log: log))
    }

    func testAWriteFromAnotherConnectionInvalidatesTheCache() throws {
        let folder = try temporaryFolder(self)
        let (_, context, log, _) = try openAndCache(folder)
        // Another process: its own connections to the same file.
        let other = try PersistentStore(url: folder.appendingPathComponent("worldcup.sqlite"), model: WorldCup.model())
        try other.database.write { db in try db.execute(sql: "INSERT INTO \"Team\" (teamName, qualifyingZone, wins) VALUES ('Fiji', 'Oceania', 0)") }
        XCTAssertTrue(try fetchWithCache(context, log: log))

        let otherContext = ObjectContext(store: other)
        try WorldCup.team("Brazil", in: otherContext).qualifyingZone = "Europe"
        try otherContext.save()
        XCTAssertTrue(try fetchWithCache(context, log: log))
    }

    func testAnotherRequestDoesNotUseTheCache() throws {
        let (_, context, log, _) = try openAndCache()
        let strong = WorldCup.request(predicate: try FetchPredicate(format: "wins >= 2"))
        XCTAssertTrue(try fetchWithCache(context, log: log, request: strong))
        let otherArgument = WorldCup.request(predicate: try FetchPredicate(format: "wins >= %d", 1))
        XCTAssertTrue(try fetchWithCache(context, log: log, request: otherArgument))
        var byName = WorldCup.request()
        byName.sortDescriptors = [FetchSortDescriptor(key: "qualifyingZone"), FetchSortDescriptor(key: "teamName")]
        XCTAssertTrue(try fetchWithCache(context, log: log, request: byName))
        var limited = WorldCup.request()
        limited.fetchLimit = 4
        XCTAssertTrue(try fetchWithCache(context, log: log, request: limited))

        // The same request without sections.
        let unsectioned = FetchedResultsController(fetchRequest: WorldCup.request(), managedObjectContext: context, cacheName: "worldcup")
        try unsectioned.performFetch()
        XCTAssertEqual(unsectioned.sections?.map(\.name), [""])
        XCTAssertEqual(unsectioned.numberOfObjects, 11)
    }

    func testUnsavedChangesNeitherReadNorWriteTheCache() throws {
        let (_, context, log, first) = try openAndCache()
        let fiji = try WorldCup.insert("Fiji", "Oceania", into: context)
        XCTAssertTrue(try fetchWithCache(context, log: log), "the unsaved team is shown")
        context.rollback()
        XCTAssertFalse(try fetchWithCache(context, log: log), "the cache of the saved data is still there")
        XCTAssertNil(fiji.managedObjectContext)
        XCTAssertEqual(try freshSnapshot { WorldCup.controller(context) }, first)
    }

    func testADamagedCacheIsIgnored() throws {
        let (_, context, log, _) = try openAndCache()
        let good = try Data(contentsOf: cacheFile)
        var damaged: [(String, Data)] = [("empty", Data()), ("not a cache", Data("hello".utf8))]
        for length in stride(from: 1, to: good.count, by: max(1, good.count / 16)) {
            damaged.append(("cut at \(length)", good.prefix(length)))
        }
        for offset in stride(from: 0, to: good.count, by: max(1, good.count / 24)) {
            var bytes = good
            bytes[offset] ^= 0xFF
            damaged.append(("byte \(offset) flipped", bytes))
        }
        damaged.append(("one byte more", good + Data([0])))
        let expected = try freshSnapshot { WorldCup.controller(context) }
        for (what, data) in damaged {
            try data.write(to: cacheFile)
            let controller = WorldCup.controller(context, cacheName: "worldcup")
            log.reset()
            try controller.performFetch()
            XCTAssertEqual(controller.snapshot, expected, what)
            XCTAssertEqual(log.orderedReads(of: "Team").count, 1, "\(what): the cache must not be trusted")
        }
    }

    func testACacheWithABitFlippedInACountIsIgnored() throws {
        try inChildProcess(self) {
            let (_, context, log, _) = try openAndCache()
            // The file: header (length, text), section count, then per section its name
            // (length, text) and its keys (count, keys); all lengths and counts 8 bytes, little-endian.
            var bytes = try Data(contentsOf: cacheFile)
            func int(at offset: Int) -> Int { (0..<8).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) } }
            let sectionName = 8 + int(at: 0) + 8
            let keyCount = sectionName + 8 + int(at: sectionName)
            XCTAssertEqual(int(at: keyCount), 3, "Africa's three teams")
            bytes[keyCount + 7] ^= 0x40   // one bit of the count's top byte
            try bytes.write(to: cacheFile)
            XCTAssertTrue(try fetchWithCache(context, log: log))
        }
    }

    func testAReplacedStoreFileDoesNotReuseTheCache() throws {
        let folder = try temporaryFolder(self)
        let url = folder.appendingPathComponent("worldcup.sqlite")
        let oldGeneration: Int64
        do {
            let (store, _, _, _) = try openAndCache(folder)
            oldGeneration = try store.generation()
        }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        // A new file at the same place (a restored backup, a reset), as many writes, other teams.
        let store = try PersistentStore(url: url, model: WorldCup.model())
        let context = ObjectContext(store: store)
        for team in WorldCup.teams.reversed() { try WorldCup.insert(team.name, "Zone \(team.name.count)", into: context) }
        try context.save()
        XCTAssertEqual(try store.generation(), oldGeneration, "the scenario: the same generation")
        let log = SQLLog()   // the new store logs nothing: compare results only
        _ = try fetchWithCache(context, log: log)
    }

    func testDeleteCacheRemovesIt() throws {
        let (_, context, log, _) = try openAndCache()
        FetchedResultsController<ManagedObject>.deleteCache(withName: "worldcup")
        XCTAssertFalse(FileManager.default.fileExists(atPath: cacheFile.path))
        XCTAssertTrue(try fetchWithCache(context, log: log), "queried again")
        XCTAssertTrue(FileManager.default.fileExists(atPath: cacheFile.path), "and cached again")

        // Names with characters unsafe in file names, and deleting them all.
        let other = WorldCup.controller(context, cacheName: "teams/by zone")
        try other.performFetch()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cacheFolder.path).count, 2)
        FetchedResultsController<ManagedObject>.deleteCache(withName: "teams/by zone")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cacheFolder.path), ["worldcup.frcache"])
        try other.performFetch()
        FetchedResultsController<ManagedObject>.deleteCache(withName: nil)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cacheFolder.path), [])
    }
}
