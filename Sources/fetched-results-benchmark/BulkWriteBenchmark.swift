import FetchedResults
import Foundation
import GRDB
import ObjectStore

/// Writes of many rows: what the change-history triggers cost a bulk write by SQL (the
/// `sqlite3` shell, another program), and what a controller costs a context's bulk save.
struct BulkWriteBenchmark {
    let folder: URL

    struct TriggerFigures {
        var insertWith = 0.0, insertWithout = 0.0
        var updateWith = 0.0, updateWithout = 0.0
    }

    /// 100,000 inserts, then an update of each of them, by SQL in one transaction each: in a
    /// new store (triggers record the history), and in a new store with its triggers
    /// dropped. The median of `runs` runs, each measuring both, so that a busy moment of the
    /// machine slows one run of each rather than one side.
    func triggers(rows: Int = 100_000, runs: Int) throws -> TriggerFigures {
        var inserts: [Bool: [Double]] = [:], updates: [Bool: [Double]] = [:]
        for run in 0..<runs {
            for withTriggers in [true, false] {
                let (insert, update) = try bulkWrite(rows: rows, withTriggers: withTriggers, name: "bulk-\(run)-\(withTriggers)")
                inserts[withTriggers, default: []].append(insert)
                updates[withTriggers, default: []].append(update)
            }
        }
        return TriggerFigures(insertWith: Measure.median(inserts[true]!), insertWithout: Measure.median(inserts[false]!),
                              updateWith: Measure.median(updates[true]!), updateWithout: Measure.median(updates[false]!))
    }

    /// Seconds to insert `rows` teams, and to update each of them, in a new store.
    private func bulkWrite(rows: Int, withTriggers: Bool, name: String) throws -> (insert: Double, update: Double) {
        let url = folder.appendingPathComponent("\(name).sqlite")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        }
        let store = try PersistentStore(url: url, model: WorldCupStore.model)
        if !withTriggers {
            try store.database.write { db in
                for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                    try db.execute(sql: "DROP TRIGGER \(name.quotedDatabaseIdentifier)")
                }
            }
        }
        let insert = try Measure.seconds {
            try store.database.write { db in
                try db.execute(sql: """
                    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < \(rows))
                    INSERT INTO "Team" (teamName, qualifyingZone, wins) SELECT 'Team ' || i, 'UEFA', i % 50 FROM n
                    """)
            }
        }
        let update = try Measure.seconds {
            try store.database.write { db in try db.execute(sql: #"UPDATE "Team" SET wins = wins + 1"#) }
        }
        return (insert, update)
    }

    struct SaveFigures {
        /// Saving 10,000 changed objects, with a controller on the context and without.
        var bulkWith = 0.0, bulkWithout = 0.0
        /// Saving 1,000 new objects in the controller's context, and in a context without one.
        var insertsWith = 0.0, insertsWithout = 0.0
    }

    /// On the benchmark's store (a million teams): `wins += 1` for 10,000 teams of one zone
    /// and one save, and 1,000 new teams and one save; each in a context with the viewer's
    /// controller (until its batch) and in one without.
    @MainActor
    func saves(store: PersistentStore) throws -> SaveFigures {
        var figures = SaveFigures()
        for withController in [false, true] {
            let context = ObjectContext(store: store)
            let controller = FetchedResultsController(fetchRequest: WorldCupStore.request, managedObjectContext: context,
                                                      sectionNameKeyPath: WorldCupStore.sectionNameKeyPath)
            let probe = TapBenchmark.BatchProbe()
            if withController {
                controller.delegate = probe
                try controller.performFetch()
            }
            var request = FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: "qualifyingZone == 'OFC'"),
                                                      sortDescriptors: [FetchSortDescriptor(key: "teamName")])
            request.fetchLimit = 10_000
            let teams = Array(try context.fetch(request))
            for team in teams {
                guard case .integer(let wins) = team.attributeValue(forKey: "wins") else { throw OptionsError("no wins") }
                try team.setValue(wins + 1, forKey: "wins")
            }
            let bulk = try Measure.seconds { try context.save() }
            guard !withController || probe.batch != nil else { throw OptionsError("the bulk save delivered no batch") }
            probe.batch = nil
            for n in 0..<1_000 {
                let team = try context.insert(entityName: "Team")
                try team.setValue("New team \(withController) \(n)", forKey: "teamName")
                try team.setValue(WorldCupStore.zones[n % WorldCupStore.zones.count], forKey: "qualifyingZone")
            }
            let inserts = try Measure.seconds { try context.save() }
            guard !withController || probe.batch != nil else { throw OptionsError("the inserts delivered no batch") }
            if withController {
                guard controller.allRowKeys == (try WorldCupStore.floorIDs(store)) else {
                    throw OptionsError("after the bulk saves the controller's order differs from a fresh fetch")
                }
                (figures.bulkWith, figures.insertsWith) = (bulk, inserts)
            } else {
                (figures.bulkWithout, figures.insertsWithout) = (bulk, inserts)
            }
        }
        return figures
    }

    struct MergeFigures {
        /// Each chunk: from the end of the other context's save to the controller's batch on
        /// the main queue (the merge and the controller's work, what the main loop spends).
        var placed: [Double] = []
        /// The same chunks merged into a controller made to fetch again and take the
        /// difference of the known changes (what a chunk cost before it was placed).
        var refetched: [Double] = []
    }

    /// On the benchmark's store: an import's chunks, 1,000 new teams saved by a context of
    /// another queue, merged into the main context, where the viewer's controller follows
    /// them; `chunks` of them into a controller that places them, then as many into one
    /// that fetches again.
    @MainActor
    func mergedInserts(store: PersistentStore, chunks: Int = 5) throws -> MergeFigures {
        var figures = MergeFigures()
        let background = ObjectContext(store: store, queue: DispatchQueue(label: "benchmark.import"))
        background.automaticallyMergesChangesFromStore = false
        var chunk = 0
        for refetching in [false, true] {
            let context = ObjectContext(store: store)
            let controller = FetchedResultsController(fetchRequest: WorldCupStore.request, managedObjectContext: context,
                                                      sectionNameKeyPath: WorldCupStore.sectionNameKeyPath)
            if refetching { controller.placementOverride = (oneByOne: 0, together: 0) }
            let probe = TapBenchmark.BatchProbe()
            controller.delegate = probe
            try controller.performFetch()
            for round in 0...chunks {   // the first one is a warm-up
                probe.deliveredAt = nil
                let saved = try background.performAndWait { () throws -> ContinuousClock.Instant in
                    for n in 0..<1_000 {
                        let team = try background.insert(entityName: "Team")
                        try team.setValue("Imported team \(chunk) \(n)", forKey: "teamName")
                        try team.setValue(WorldCupStore.zones[(n * 7 + chunk) % WorldCupStore.zones.count], forKey: "qualifyingZone")
                        try team.setValue(Int64((n * 31 + chunk) % 51), forKey: "wins")
                    }
                    try background.save()
                    return .now
                }
                chunk += 1
                let deadline = Date().addingTimeInterval(10)
                while probe.deliveredAt == nil && Date() < deadline { RunLoop.current.run(mode: .default, before: Date().addingTimeInterval(0.001)) }
                guard let delivered = probe.deliveredAt else { throw OptionsError("a merged chunk delivered no batch") }
                guard round > 0 else { continue }
                if refetching { figures.refetched.append((delivered - saved).seconds) } else { figures.placed.append((delivered - saved).seconds) }
            }
            guard controller.allRowKeys == (try WorldCupStore.floorIDs(store)) else {
                throw OptionsError("after the merged chunks the controller's order differs from a fresh fetch")
            }
        }
        return figures
    }
}
