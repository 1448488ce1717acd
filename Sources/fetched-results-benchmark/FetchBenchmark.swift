import FetchedResults
import Foundation
import GRDB
import ObjectStore
import struct ObjectStore.FetchRequest

/// `performFetch()` of the viewer's controller against the floor (the same query's IDs
/// through GRDB), without and with a section cache.
struct FetchBenchmark {
    let store: PersistentStore
    let runs: Int

    func makeController(cacheName: String? = nil) -> FetchedResultsController<ManagedObject> {
        FetchedResultsController(fetchRequest: WorldCupStore.request, managedObjectContext: ObjectContext(store: store),
                                 sectionNameKeyPath: WorldCupStore.sectionNameKeyPath, cacheName: cacheName)
    }

    /// Seconds of each run: the floor and a fresh controller's performFetch, alternated.
    func uncached() throws -> (controller: [Double], floor: [Double]) {
        // Warm up both (and check that they agree) before timing.
        let expected = try WorldCupStore.floorIDs(store)
        let first = makeController()
        try first.performFetch()
        try check(first, equals: expected)
        var controller: [Double] = [], floor: [Double] = []
        for _ in 0..<runs {
            floor.append(try Measure.seconds { _ = try WorldCupStore.floorIDs(store) })
            let fresh = makeController()
            controller.append(try Measure.seconds { try fresh.performFetch() })
        }
        return (controller, floor)
    }

    /// Seconds to write the cache (first performFetch), and of each later performFetch
    /// that reads it.
    func cached(in directory: URL) throws -> (write: Double, reads: [Double]) {
        SectionCache.directory = directory
        let name = "benchmark"
        FetchedResultsController<ManagedObject>.deleteCache(withName: name)
        let writer = makeController(cacheName: name)
        let write = try Measure.seconds { try writer.performFetch() }
        let file = try cacheFile(in: directory)
        let written = try modificationDate(of: file)
        let expected = try WorldCupStore.floorIDs(store)
        var reads: [Double] = []
        for run in 0...runs {
            let reader = makeController(cacheName: name)
            let seconds = try Measure.seconds { try reader.performFetch() }
            if run == 0 {
                try check(reader, equals: expected)   // the first read is a warm-up
            } else {
                reads.append(seconds)
            }
        }
        guard try modificationDate(of: file) == written else {
            throw OptionsError("the section cache was rewritten: a later performFetch did not use it")
        }
        return (write, reads)
    }

    /// SQLite's plan for `sql`, one step a line.
    func queryPlan(_ sql: String) throws -> [String] {
        try store.database.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String }
        }
    }

    private func check(_ controller: FetchedResultsController<ManagedObject>, equals expected: [Int64]) throws {
        guard controller.allRowKeys == expected else {
            throw OptionsError("the controller's order differs from the floor query's (\(controller.numberOfObjects) vs \(expected.count) IDs)")
        }
    }

    private func cacheFile(in directory: URL) throws -> URL {
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        guard let file = files.first(where: { $0.pathExtension == "frcache" }) else {
            throw OptionsError("performFetch with a cacheName wrote no cache file in \(directory.path)")
        }
        return file
    }

    private func modificationDate(of file: URL) throws -> Date {
        try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date ?? .distantPast
    }
}

extension FetchedResultsController {
    /// The row keys of every section, one after another: the order to compare with the floor's.
    var allRowKeys: [Int64] {
        (sections ?? []).indices.flatMap { rowKeys(inSection: $0) }
    }
}
