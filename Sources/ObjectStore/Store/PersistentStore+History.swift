import Foundation
import GRDB

/// A reader of the change history asked for changes older than the oldest one kept: it
/// must fetch again instead of applying changes (see ``PersistentStore/historyLimit`` and
/// ``PersistentStore/pruneHistory(through:)``).
public struct HistoryGap: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token the reader had.
    public var token: Int64
    /// The newest token pruned: changes after it are still recorded.
    public var prunedThrough: Int64

    public var description: String {
        "the change history after token \(token) was pruned (through token \(prunedThrough)); fetch again and read the history from the current token"
    }
}

/// The change history: triggers on every entity table record each committed insert, update
/// and delete with an increasing token, whoever writes the row (this process, another one,
/// the `sqlite3` shell).
///
/// Saves keep it short: see ``historyLimit``.
///
/// ## Topics
/// - ``currentHistoryToken()``
/// - ``changes(since:)``
/// - ``historyLimit``
/// - ``defaultHistoryLimit``
/// - ``historyRetention``
/// - ``defaultHistoryRetention``
/// - ``pruneHistory(through:)``
/// - ``pruneHistory(keepingLast:)``
/// - ``HistoryGap``
extension PersistentStore {
    private static let prunedKey = "historyPrunedThrough"
    /// The token after which a sharing session still needs the history (``keepHistory(after:in:)``).
    private static let keptAfterKey = "historyKeptAfter"

    /// How many times ``historyLimit`` the history may grow to keep what a sharing session
    /// has not pushed yet (see ``keepHistory(after:in:)``).
    package static let historyKeptForSharing: Int64 = 10

    /// The token of the newest recorded change (0 when nothing was ever recorded).
    public func currentHistoryToken() throws -> Int64 {
        try database.read { db in try Self.currentToken(db) }
    }

    static func currentToken(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM sqlite_sequence WHERE name = ?"), arguments: [Schema.historyTable]) ?? 0
    }

    /// How many recorded changes the store keeps, at most about: nil sets no limit on
    /// their number, ``defaultHistoryLimit`` (10,000) unless set.
    ///
    /// Each save of a context on this store checks the history in its write transaction
    /// and, once it holds half as many changes again as the limit (15,000 by default, the
    /// changes other processes recorded included), deletes the oldest down to the limit.
    /// The file therefore stops growing with the history, and most saves delete nothing:
    /// the check is one lookup of the smallest token. Changes older than
    /// ``historyRetention`` go sooner. A reader that fell behind the pruned point gets
    /// ``HistoryGap`` and fetches again; a context following the store
    /// (``ObjectContext/followStore(interval:)``) does that by itself.
    ///
    /// The limit belongs to this store object, not to the file: another process keeps
    /// the limit it set. Any value below 0 counts as 0 (keep nothing). With this and
    /// ``historyRetention`` both nil, saves prune nothing.
    public var historyLimit: Int64? {
        get { historyLimitValue.withLock { $0 } }
        set { historyLimitValue.withLock { $0 = newValue } }
    }

    /// The ``historyLimit`` of a newly opened store: 10,000 changes.
    public static let defaultHistoryLimit: Int64 = 10_000

    /// How long, in seconds, a recorded change is kept for the readers that follow the
    /// store, however few changes the history holds: nil keeps changes by their number
    /// only (``historyLimit``), ``defaultHistoryRetention`` (60 s) unless set.
    ///
    /// The readers of the history are the contexts that follow the store, in this process
    /// and in others, which read each commit within moments of it, and a sharing session's
    /// changes not pushed yet, which are kept whatever their age. So once nobody wrote for
    /// a while the history has nothing left to give, and a store that once took a burst of
    /// changes (a big import, a million inserts and deletes shared with others) would
    /// otherwise keep ``historyLimit`` of them for good: on a small store, more bytes than
    /// its objects.
    ///
    /// Each write to the store (a save, a sharing session's pull) notes its token and the
    /// time, and deletes the changes committed before a note at least this old: a change
    /// goes at the first write at least `historyRetention` after it, and, while writes go
    /// on, by the first one twice as long after it. A reader that falls further behind
    /// (a process stopped in a debugger, a computer asleep) gets ``HistoryGap`` and fetches
    /// again, as after a prune by ``historyLimit``. The time is the wall clock's, written
    /// in the file for every process: a clock set back keeps changes longer, one set
    /// forward can prune a reader into fetching again, never into missing a change.
    ///
    /// Like ``historyLimit``, it belongs to this store object. Any value below 0 counts
    /// as 0.
    public var historyRetention: TimeInterval? {
        get { historyRetentionValue.withLock { $0 } }
        set { historyRetentionValue.withLock { $0 = newValue } }
    }

    /// The ``historyRetention`` of a newly opened store: 60 seconds.
    public static let defaultHistoryRetention: TimeInterval = 60

    /// Prunes the history to ``historyLimit`` when it holds half as many again, and the
    /// changes older than ``historyRetention``, but never the changes after `kept` (a
    /// sharing session's changes not pushed yet: it writes the changes it pulls through
    /// here), nor, in any process, those after the token the file keeps them for
    /// (``keepHistory(after:in:)``), nor those this process's contexts hold back for
    /// (``keepHistoryInProcess(after:for:)``), unless they are more than
    /// ``historyKeptForSharing`` times the limit.
    package func pruneHistoryIfNeeded(_ db: Database, keepingAfter kept: Int64 = .max) throws {
        let limit = historyLimit.map { max(0, $0) }
        let retention = historyRetention.map { max(0, $0) }
        guard limit != nil || retention != nil else { return }
        let newest = try Self.currentToken(db)
        let aged = try retention.flatMap { try Self.agedToken(db, retention: $0, newest: newest) }
        // The tokens kept run from the oldest to the newest: pruning cuts the oldest off.
        guard let oldest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(token) FROM \(Schema.historyTable)")) else { return }
        var through = aged ?? oldest - 1
        // (A limit too big to hold half as many again is no limit.)
        if let limit, limit < .max / 2, newest - oldest + 1 > limit + limit / 2 { through = max(through, newest - limit) }
        through = min(through, kept)
        // What a sharing session (in any process) and this process's contexts holding the
        // store's changes keep, up to a cap.
        let cap = limit.map { $0 > .max / Self.historyKeptForSharing ? .min : newest - $0 * Self.historyKeptForSharing } ?? .min
        if let floor = try Int64.fetchOne(db.cachedStatement(sql: "SELECT CAST(value AS INTEGER) FROM \(Self.metadataTable) WHERE key = ?"),
                                          arguments: [Self.keptAfterKey]) {
            through = min(through, max(floor, cap))
        }
        if let held = heldHistoryTokens.withLock({ $0.values.min() }) { through = min(through, max(held, cap)) }
        guard through >= oldest else { return }
        try Self.pruneHistory(through: through, in: db)
    }

    /// The newest token committed at least `retention` seconds ago, as far as the file's
    /// two notes tell, and the notes brought up to this write (`newest`, now).
    ///
    /// A note is a token and the time a write saw it as the newest: every change up to it
    /// was committed by then. The newer note moves with every write; the older one stays
    /// until it is `retention` old and used, and then takes the newer's place. A change is
    /// therefore pruned between `retention` and twice that after it while writes go on,
    /// and at the first write `retention` after the last one when they stop.
    private static func agedToken(_ db: Database, retention: TimeInterval, newest: Int64) throws -> Int64? {
        let now = Date().timeIntervalSince1970
        let stored = try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM \(metadataTable) WHERE key = ?"), arguments: [historyNotesKey])
        var notes = HistoryNotes(stored ?? "")
        var aged: Int64?
        if let newer = notes.newer, newer.time <= now - retention {
            (aged, notes.older) = (newer.token, nil)
        } else {
            if let older = notes.older, older.time <= now - retention { (aged, notes.older) = (older.token, nil) }
            if notes.older == nil { notes.older = notes.newer }
        }
        notes.newer = HistoryNotes.Note(token: newest, time: now)
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(metadataTable) (key, value) VALUES (?, ?)").execute(arguments: [historyNotesKey, notes.text])
        return aged
    }

    private static let historyNotesKey = "historyTimes"

    /// Keeps the changes recorded after `token` (nil: no longer) from this store object's
    /// pruning while `holder` needs them, up to ``historyKeptForSharing`` times
    /// ``historyLimit``: a context holding the store's changes back
    /// (``ObjectContext/holdStoreChanges()``) takes them in from there when it lets go.
    ///
    /// A window whose list is fetched again on a reader holds them for the fetch: joining a
    /// shared database of a million rows, the join's pages pruned the history past it, and
    /// the context, missing changes, told its controller that anything may have changed. The
    /// controller then compared every row of the list with the fetched one on the main
    /// thread: 4.3–4.5 s without a frame, in two runs of seven.
    package func keepHistoryInProcess(after token: Int64?, for holder: ObjectIdentifier) {
        heldHistoryTokens.withLock { $0[holder] = token }
    }

    /// Keeps the changes recorded after `token` (nil: no longer) from every process's
    /// pruning, up to ``historyKeptForSharing`` times ``historyLimit``: a sharing session's
    /// changes not pushed yet, which its next push reads to know which objects to send.
    /// Without them, a push compares every object of the store with its base: a store
    /// saving faster than it pushes (thousands of changes a second) lost them to its own
    /// saves' pruning, and each push scanned the whole store.
    package static func keepHistory(after token: Int64?, in db: Database) throws {
        if let token {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(metadataTable) (key, value) VALUES (?, ?)").execute(arguments: [keptAfterKey, token])
        } else {
            try db.cachedStatement(sql: "DELETE FROM \(metadataTable) WHERE key = ?").execute(arguments: [keptAfterKey])
        }
    }

    /// The changes committed after `token`, folded per object (an insert then an update is an
    /// insert; anything then a delete is a delete; an insert then a delete is nothing), and
    /// the token to read from next time.
    ///
    /// An updated object lists the attributes and to-one relationships its updates changed,
    /// as the history records them; every one of its entity's when that is not known (see
    /// `Schema.changedColumnsColumn`).
    ///
    /// - Throws: ``HistoryGap`` when changes after `token` were pruned.
    public func changes(since token: Int64) throws -> (changes: ObjectChanges, newToken: Int64) {
        try changes(since: token, through: nil)
    }

    /// The changes recorded after `token` up to `last` (nil: the newest), with the token to
    /// read on from.
    func changes(since token: Int64, through last: Int64?) throws -> (changes: ObjectChanges, newToken: Int64) {
        try database.read { db in try changes(since: token, through: last, in: db) }
    }

    private func changes(since token: Int64, through last: Int64? = nil, in db: Database) throws -> (changes: ObjectChanges, newToken: Int64) {
        let pruned = try Int64.fetchOne(db.cachedStatement(sql: "SELECT CAST(value AS INTEGER) FROM \(Self.metadataTable) WHERE key = ?"), arguments: [Self.prunedKey]) ?? 0
        if token < pruned { throw HistoryGap(token: token, prunedThrough: pruned) }
        var changes = ObjectChanges()
        var newToken = token
        let entities = try Schema.entitiesByNumber(in: db, model: model)
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT token, entity, rowKey, kind, \(Schema.changedColumnsColumn) FROM \(Schema.historyTable) WHERE token > ? AND token <= ? ORDER BY token"),
                                       arguments: [token, last ?? .max])
        // The keys an update changed, by entity and mask: a page of updates of one column
        // makes one set.
        var changedKeys: [String: [Int64?: Set<String>]] = [:]
        func keys(_ mask: Int64?, of entity: EntityDescription) throws -> Set<String> {
            if let known = changedKeys[entity.name]?[mask] { return known }
            let keys = try mask.map { Schema.changedColumns($0, of: try db.columns(in: entity.name).map(\.name)) }
                ?? Set(Schema.columns(of: entity, in: model).map(\.name))
            changedKeys[entity.name, default: [:]][mask] = keys
            return keys
        }
        while let row = try rows.next() {
            newToken = row[0]
            // The columns allow NULL (see `Schema.historyTable`): a row without an entity
            // or key, which only a hand-made insert leaves, names no object.
            guard let number: Int64 = row[1], let entity = entities[number], let key: Int64 = row[2] else { continue }
            let id = ObjectID(entityName: entity.name, primaryKey: key)
            switch (row[3] as Int64?).flatMap(Schema.HistoryKind.init(rawValue:)) {
            case .insert:
                changes.deleted.remove(id)
                changes.inserted.insert(id)
            case .delete:
                changes.updated[id] = nil
                if changes.inserted.remove(id) == nil { changes.deleted.insert(id) }
            case .update, nil:
                if !changes.inserted.contains(id) {
                    changes.updated[id, default: []].formUnion(try keys(row[4], of: entity))
                }
            }
        }
        if let last { return (changes, last) }
        return (changes, max(newToken, try Self.currentToken(db)))
    }

    /// Every object a change after `token` recorded, whatever became of it (an object
    /// inserted and then deleted is named too, unlike in ``changes(since:)``), and the token
    /// to read from next time.
    ///
    /// Changes whose tokens lie in `excluded` are left out: a writer that knows which
    /// changes it made itself (a sharing engine, the rows it took from a server) need not
    /// read their objects again. An object another change after `token` names is named.
    ///
    /// - Throws: ``HistoryGap`` when changes after `token` were pruned.
    package func objectsWritten(since token: Int64, excluding excluded: [ClosedRange<Int64>] = [],
                                in db: Database) throws -> (objects: Set<ObjectID>, newToken: Int64) {
        let pruned = try Int64.fetchOne(db.cachedStatement(sql: "SELECT CAST(value AS INTEGER) FROM \(Self.metadataTable) WHERE key = ?"), arguments: [Self.prunedKey]) ?? 0
        if token < pruned { throw HistoryGap(token: token, prunedThrough: pruned) }
        let entities = try Schema.entitiesByNumber(in: db, model: model)
        var objects = Set<ObjectID>()
        let ranges = excluded.filter { $0.upperBound > token }
        var arguments: [Int64] = [token]
        for range in ranges { arguments += [range.lowerBound, range.upperBound] }
        let sql = "SELECT DISTINCT entity, rowKey FROM \(Schema.historyTable) WHERE token > ?"
            + String(repeating: " AND token NOT BETWEEN ? AND ?", count: ranges.count)
        let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
        while let row = try rows.next() {
            guard let number: Int64 = row[0], let entity = entities[number], let key: Int64 = row[1] else { continue }
            objects.insert(ObjectID(entityName: entity.name, primaryKey: key))
        }
        return (objects, try Self.currentToken(db))
    }

    /// ``currentHistoryToken()`` inside a transaction of the caller's.
    package static func currentHistoryToken(in db: Database) throws -> Int64 {
        try currentToken(db)
    }

    /// Deletes the recorded changes up to and including `token`. A reader still behind it
    /// gets ``HistoryGap`` from ``changes(since:)``.
    public func pruneHistory(through token: Int64) throws {
        try database.write { db in try Self.pruneHistory(through: token, in: db) }
    }

    private static func pruneHistory(through token: Int64, in db: Database) throws {
        let pruned = try Int64.fetchOne(db, sql: "SELECT CAST(value AS INTEGER) FROM \(metadataTable) WHERE key = ?", arguments: [prunedKey]) ?? 0
        guard token > pruned else { return }
        // The token is the primary key: a range delete.
        try db.execute(sql: "DELETE FROM \(Schema.historyTable) WHERE token <= ?", arguments: [token])
        try db.execute(sql: "INSERT OR REPLACE INTO \(metadataTable) (key, value) VALUES (?, ?)", arguments: [prunedKey, token])
    }

    /// Deletes all but the newest `count` recorded changes.
    public func pruneHistory(keepingLast count: Int64) throws {
        let current = try currentHistoryToken()
        if current - count > 0 { try pruneHistory(through: current - count) }
    }
}

/// The times of two tokens of the history (``PersistentStore/historyRetention``), as the
/// store's metadata keeps them: `older-token older-time newer-token newer-time`, in seconds
/// since 1970, a missing note as `- -`. Text that does not read so counts as no notes: the
/// next writes make new ones, and nothing is pruned by age until they are old enough.
struct HistoryNotes {
    struct Note {
        var token: Int64
        var time: TimeInterval
    }

    var older: Note?
    var newer: Note?

    init(_ text: String) {
        let fields = text.split(separator: " ")
        guard fields.count == 4 else { return }
        func note(_ token: Substring, _ time: Substring) -> Note? {
            guard let token = Int64(token), let time = TimeInterval(time), time.isFinite else { return nil }
            return Note(token: token, time: time)
        }
        (older, newer) = (note(fields[0], fields[1]), note(fields[2], fields[3]))
    }

    var text: String {
        [older, newer].map { $0.map { "\($0.token) \($0.time)" } ?? "- -" }.joined(separator: " ")
    }
}

/// A save of one of this store's contexts, as the store's other contexts take it: from this
/// record, with the keys that changed, rather than from the history (which names an updated
/// object's columns, not the ones that changed).
struct LocalSave: Sendable {
    /// Names the record: a save that did not commit leaves its tokens to the next one.
    let id: UInt64
    /// The history tokens the save wrote.
    let tokens: ClosedRange<Int64>
    /// The context that saved (it took its own changes as it made them).
    let source: ObjectIdentifier
    /// The file's generation (``StoreChangeFeed/generation``): tokens of a replaced file
    /// name nothing in the new one.
    let generation: Int
    var changes: Changes

    enum Changes: Sendable {
        /// Committed, not yet published by the saving context (it is telling its own
        /// observers first): the other contexts wait for it, to take saves in order.
        case pending
        case published(ObjectChanges)
        /// Published long ago: to be read from the history, like another process's commit.
        case dropped
    }
}

/// The saves of a store's contexts, in token order, and the ID of the next.
struct LocalSaves: Sendable {
    var saves: [LocalSave] = []
    var nextID: UInt64 = 0
}

extension PersistentStore {
    /// How many published saves keep their changes for contexts that are behind; older
    /// ones are read from the history.
    static let publishedSavesKept = 256

    /// Notes, in the save's write transaction, that `context` wrote the history tokens
    /// `first...last`: the other contexts wait for its changes there (``publishLocalSave(_:changes:)``).
    /// Returns the record's ID.
    func recordLocalSave(from first: Int64, through last: Int64, by context: ObjectContext) -> UInt64? {
        guard first <= last else { return nil }
        let generation = feed.generation
        return localSaves.withLock { records in
            if let last = records.saves.last, last.generation != generation { records.saves = [] }
            records.nextID += 1
            records.saves.append(LocalSave(id: records.nextID, tokens: first...last, source: ObjectIdentifier(context), generation: generation, changes: .pending))
            // Followers read within moments: an old range only matters to a follower that
            // fell far behind, and that one gets a gap once the history is pruned anyway.
            if records.saves.count > 10_000 { records.saves.removeFirst(records.saves.count - 10_000) }
            return records.nextID
        }
    }

    /// Forgets the record of a save that did not commit: its tokens will be used again.
    func forgetLocalSave(_ id: UInt64) {
        localSaves.withLock { $0.saves.removeAll { $0.id == id } }
        feed.tellSubscribersOfLocalSave()
    }

    /// Gives the other contexts the changes of the committed save recorded as `id`, as the
    /// saving context told its own observers, and tells them (on their queues).
    func publishLocalSave(_ id: UInt64, changes: ObjectChanges) {
        localSaves.withLock { records in
            guard let index = records.saves.lastIndex(where: { $0.id == id }) else { return }
            records.saves[index].changes = .published(changes)
            let old = index - Self.publishedSavesKept
            if old >= 0, case .published = records.saves[old].changes { records.saves[old].changes = .dropped }
        }
        feed.tellSubscribersOfLocalSave()
    }

    /// The save of this store's contexts that wrote `token`, if any.
    func localSave(writing token: Int64) -> LocalSave? {
        let generation = feed.generation
        return localSaves.withLock { records in
            // Recorded inside their write transactions, so in token order: the newest first.
            for save in records.saves.reversed() where save.generation == generation {
                if save.tokens.contains(token) { return save }
                if save.tokens.upperBound < token { return nil }
            }
            return nil
        }
    }

    /// Reads, on the calling thread (a reader of the store, off any context's queue), the
    /// changes recorded after `token` up to `last`, or up to the first save of this store's
    /// contexts after `token` when one comes before (a context takes those from the save's
    /// record, not from the history): the first stretch that a context which has taken the
    /// store's changes up to `token` reads from the history when it takes them up to `last`
    /// (``ObjectContext/takeStoreChanges(through:readAhead:)``). Nil when a save of this
    /// store's contexts wrote `token + 1`, or the history cannot be read (pruned, locked):
    /// the context then reads it itself.
    package func readHistoryAhead(since token: Int64, through last: Int64) -> HistoryReadAhead? {
        let generation = feed.generation
        guard token < last, localSave(writing: token + 1) == nil else { return nil }
        let end = historyStretchEnd(after: token, through: last)
        guard let (changes, _) = try? changes(since: token, through: end) else { return nil }
        return HistoryReadAhead(since: token, through: end, generation: generation, changes: changes)
    }

    /// Where a stretch of history written elsewhere that starts after `token` ends: at `last`,
    /// or just before the next save of this store's contexts, which is taken from its record.
    func historyStretchEnd(after token: Int64, through last: Int64) -> Int64 {
        min(last, (firstLocalSaveToken(after: token + 1) ?? .max) - 1)
    }

    /// The first token after `token` that a save of this store's contexts wrote.
    func firstLocalSaveToken(after token: Int64) -> Int64? {
        let generation = feed.generation
        return localSaves.withLock { records in
            var first: Int64?
            for save in records.saves.reversed() where save.generation == generation {
                guard save.tokens.lowerBound > token else { break }
                first = save.tokens.lowerBound
            }
            return first
        }
    }

    /// The last token the saves of this store's contexts wrote.
    var lastLocalSaveToken: Int64? {
        let generation = feed.generation
        return localSaves.withLock { records in records.saves.last.flatMap { $0.generation == generation ? $0.tokens.upperBound : nil } }
    }
}

/// The store's changes between two history tokens, read on a reader ahead of the context that
/// takes them in (``PersistentStore/readHistoryAhead(since:through:)``), so that a page of
/// thousands of changes is not read on the context's queue (the window's main loop).
package struct HistoryReadAhead: Sendable {
    /// The token the changes come after.
    package var since: Int64
    /// The last token they include.
    package var through: Int64
    /// The store file's generation they were read from (``StoreChangeFeed/generation``).
    var generation: Int
    /// The changes, as ``PersistentStore/changes(since:)`` reads them.
    var changes: ObjectChanges
}
