import FetchedResults
import Foundation
import GRDB
import ObjectStore

/// Writes of many rows: what the change-history triggers cost a bulk write by SQL (the
/// `sqlite3` shell, another program), and what a controller costs a context's bulk save.
struct BulkWriteBenchmark {
    let folder: URL

    struct TriggerFigures {
        var insertWith = 0.0, insertWithout = 0.0, insertEmpty = 0.0
        var updateWith = 0.0, updateWithout = 0.0, updateEmpty = 0.0
    }

    /// The triggers of a bulk write's table.
    enum Triggers: CaseIterable {
        /// The store's own: each change recorded in the history.
        case history
        /// None at all.
        case none
        /// An insert and an update trigger that do nothing (`WHEN 0`): what any row trigger
        /// costs in SQLite before it does anything. A table with a row trigger loses SQLite's
        /// one-pass `UPDATE` (the rows are collected first, then each one sought again) and
        /// has an `INSERT … SELECT` written into a temporary table first, and each row runs
        /// the trigger's program.
        case empty
    }

    /// 100,000 inserts, then an update of each of them, by SQL in one transaction each: in a
    /// new store (triggers record the history), in a new store with its triggers dropped,
    /// and in one whose triggers do nothing. The median of `runs` runs, each measuring all
    /// three, so that a busy moment of the machine slows one run of each rather than one side.
    func triggers(rows: Int = 100_000, runs: Int) throws -> TriggerFigures {
        var inserts: [Triggers: [Double]] = [:], updates: [Triggers: [Double]] = [:]
        for run in 0..<runs {
            for triggers in Triggers.allCases {
                let (insert, update) = try bulkWrite(rows: rows, triggers: triggers, name: "bulk-\(run)-\(triggers)")
                inserts[triggers, default: []].append(insert)
                updates[triggers, default: []].append(update)
            }
        }
        return TriggerFigures(insertWith: Measure.median(inserts[.history]!), insertWithout: Measure.median(inserts[.none]!),
                              insertEmpty: Measure.median(inserts[.empty]!),
                              updateWith: Measure.median(updates[.history]!), updateWithout: Measure.median(updates[.none]!),
                              updateEmpty: Measure.median(updates[.empty]!))
    }

    /// Seconds to insert `rows` teams, and to update each of them, in a new store.
    private func bulkWrite(rows: Int, triggers: Triggers, name: String) throws -> (insert: Double, update: Double) {
        let url = folder.appendingPathComponent("\(name).sqlite")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        }
        let store = try PersistentStore(url: url, model: WorldCupStore.model)
        if triggers != .history {
            try store.database.write { db in
                for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                    try db.execute(sql: "DROP TRIGGER \(name.quotedDatabaseIdentifier)")
                }
                if triggers == .empty {
                    for event in ["INSERT", "UPDATE"] {
                        try db.execute(sql: #"CREATE TRIGGER "empty_\#(event)" AFTER \#(event) ON "Team" WHEN 0 BEGIN SELECT 1; END"#)
                    }
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
    /// controller (until its batch) and in one without. The median of `runs` runs, each
    /// measuring both, so that a busy moment of the machine slows one run of each.
    @MainActor
    func saves(store: PersistentStore, runs: Int = 3) throws -> SaveFigures {
        var runFigures: [SaveFigures] = []
        for _ in 0..<runs { runFigures.append(try saveRun(store: store)) }
        return SaveFigures(bulkWith: Measure.median(runFigures.map(\.bulkWith)), bulkWithout: Measure.median(runFigures.map(\.bulkWithout)),
                           insertsWith: Measure.median(runFigures.map(\.insertsWith)),
                           insertsWithout: Measure.median(runFigures.map(\.insertsWithout)))
    }

    @MainActor
    private func saveRun(store: PersistentStore) throws -> SaveFigures {
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
            // A save's commit copies the write-ahead log into the file once it has grown past
            // 1,000 pages (SQLite's automatic checkpoint): empty it first, so that no save pays
            // for the one before it.
            try emptyLog(of: store)
            let bulk = try Measure.seconds { try context.save() }
            guard !withController || probe.batch != nil else { throw OptionsError("the bulk save delivered no batch") }
            probe.batch = nil
            for n in 0..<1_000 {
                let team = try context.insert(entityName: "Team")
                try team.setValue("New team \(withController) \(n)", forKey: "teamName")
                try team.setValue(WorldCupStore.zones[n % WorldCupStore.zones.count], forKey: "qualifyingZone")
            }
            try emptyLog(of: store)
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

    /// Copies the store's write-ahead log into its file and empties it.
    private func emptyLog(of store: PersistentStore) throws {
        try store.database.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    }

    struct MergeFigures {
        /// Each chunk: from the end of the other context's save to the controller's batch on
        /// the main queue (the merge and the controller's work, what the main loop spends).
        var placed: [Double] = []
        /// The same chunks merged into a controller made to fetch again and take the
        /// difference of the known changes (what a chunk cost before it was placed).
        var refetched: [Double] = []
        /// Each chunk: the longest the main queue was held at once from the save to the
        /// batch (the merge, and the placement where it ran on the main queue): how long a
        /// window would not draw. Since a chunk on a long list is placed on a reader of the
        /// store (#11), this is smaller than `placed`.
        var placedTurns: [Double] = []
        var refetchedTurns: [Double] = []
    }

    /// `chunks` saves (after a warm-up, which is not counted) of `edit` on `background`,
    /// each merged into the main context, where a controller of the viewer's list follows
    /// them (`configure` sets it up): from the end of each save to the controller's batch on
    /// the main queue (the merge and the controller's work, what the main loop spends), and
    /// the longest the main queue was held at once meanwhile (how long a window would not
    /// draw). `edit` is given the number of the chunk, `chunk` counted on over the calls.
    /// Checks that the controller's order is a fresh fetch's at the end.
    @MainActor
    private func followSaves(of background: ObjectContext, store: PersistentStore, chunks: Int, chunk: inout Int, what: String,
                             configure: (FetchedResultsController<ManagedObject>) -> Void = { _ in },
                             edit: @escaping (_ chunk: Int) throws -> Void)
        throws -> (latencies: [Double], turns: [Double], controller: FetchedResultsController<ManagedObject>) {
        let context = ObjectContext(store: store)
        let controller = FetchedResultsController(fetchRequest: WorldCupStore.request, managedObjectContext: context,
                                                  sectionNameKeyPath: WorldCupStore.sectionNameKeyPath)
        configure(controller)
        let probe = TapBenchmark.BatchProbe()
        controller.delegate = probe
        try controller.performFetch()
        var latencies: [Double] = [], turns: [Double] = []
        for round in 0...chunks {   // the first one is a warm-up
            probe.deliveredAt = nil
            let number = chunk
            let saved = try background.performAndWait { () throws -> ContinuousClock.Instant in
                try edit(number)
                try background.save()
                return .now
            }
            chunk += 1
            let deadline = Date().addingTimeInterval(10)
            // Each turn of the run loop waits at most 1 ms for work, then does it: what a
            // turn takes beyond that is work the main queue did without a break.
            var longestTurn = 0.0
            while probe.deliveredAt == nil && Date() < deadline {
                let turn = ContinuousClock.now
                RunLoop.current.run(mode: .default, before: Date().addingTimeInterval(0.001))
                longestTurn = max(longestTurn, (ContinuousClock.now - turn).seconds - 0.001)
            }
            guard let delivered = probe.deliveredAt else { throw OptionsError("a merged chunk of \(what) delivered no batch") }
            guard round > 0 else { continue }
            latencies.append((delivered - saved).seconds)
            turns.append(longestTurn)
        }
        guard controller.allRowKeys == (try WorldCupStore.floorIDs(store)) else {
            throw OptionsError("after the merged chunks of \(what) the controller's order differs from a fresh fetch")
        }
        return (latencies, turns, controller)
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
        let insert = { (chunk: Int) throws in
            for n in 0..<1_000 {
                let team = try background.insert(entityName: "Team")
                try team.setValue("Imported team \(chunk) \(n)", forKey: "teamName")
                try team.setValue(WorldCupStore.zones[(n * 7 + chunk) % WorldCupStore.zones.count], forKey: "qualifyingZone")
                try team.setValue(Int64((n * 31 + chunk) % 51), forKey: "wins")
            }
        }
        var chunk = 0
        (figures.placed, figures.placedTurns, _) = try followSaves(of: background, store: store, chunks: chunks, chunk: &chunk, what: "inserts", edit: insert)
        (figures.refetched, figures.refetchedTurns, _) = try followSaves(of: background, store: store, chunks: chunks, chunk: &chunk, what: "inserts",
                                                                         configure: { $0.policy.placementLimit = 0 },   // every change fetched again
                                                                         edit: insert)
        return figures
    }

    struct UpdateFigures {
        /// Each chunk's images set (a key the list does not read): from the end of the other
        /// context's save to the controller's batch, and the longest main-queue turn meanwhile.
        var detail: [Double] = []
        var detailTurns: [Double] = []
        /// The same teams' wins set instead (a key the list sorts by), the same way.
        var sorted: [Double] = []
        var sortedTurns: [Double] = []
        /// Batches made as updates in place, of the detail chunks.
        var inPlace = 0
    }

    /// On the benchmark's store: another context of the process sets a field of 1,000
    /// existing teams and saves, `chunks` times (after a warm-up), merged into the main
    /// context, where the viewer's controller follows them: their images (which the list
    /// neither sorts, sections nor filters by), then their wins.
    @MainActor
    func mergedUpdates(store: PersistentStore, rows: Int, chunks: Int = 5) throws -> UpdateFigures {
        var figures = UpdateFigures()
        let background = ObjectContext(store: store, queue: DispatchQueue(label: "benchmark.edits"))
        background.automaticallyMergesChangesFromStore = false
        let set = { (key: String) in
            { (chunk: Int) throws in
                for n in 0..<1_000 {
                    // Spread over the list: every 997th row from a place of its own.
                    let rowKey = Int64((chunk * 1_000 + n) * 997 % rows + 1)
                    let team = try background.object(with: ObjectID(entityName: "Team", rowKey: rowKey))
                    if key == "wins" {
                        try team.setValue(Int64((n * 31 + chunk) % 51), forKey: key)
                    } else {
                        try team.setValue("edited-\(chunk)-\(n)", forKey: key)
                    }
                }
            }
        }
        var chunk = 0
        let images = try followSaves(of: background, store: store, chunks: chunks, chunk: &chunk, what: "images", edit: set("imageName"))
        (figures.detail, figures.detailTurns, figures.inPlace) = (images.latencies, images.turns, images.controller.counts.updatesInPlace)
        (figures.sorted, figures.sortedTurns, _) = try followSaves(of: background, store: store, chunks: chunks, chunk: &chunk, what: "wins", edit: set("wins"))
        return figures
    }
}
