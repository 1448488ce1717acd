import FetchedResults
import Foundation
import GRDB
import ObjectStore

/// A change stamped with who saved it and when: a team's `imageName` set to
/// `s<desktop>:<microseconds since 1970>` just before the save, so that a desktop receiving
/// it can tell how long it took (all desktops run on this machine, on one clock).
enum Stamp {
    /// The attribute that carries the stamp.
    static let key = "imageName"

    /// The wall clock in microseconds since 1970.
    static func nowMicros() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }

    /// The stamp of a save by desktop `desktop` now.
    static func make(desktop: Int) -> String { "s\(desktop):\(nowMicros())" }

    /// The desktop and time of a stamp; nil for any other value.
    static func parse(_ text: String) -> (desktop: Int, micros: Int64)? {
        guard text.first == "s", let colon = text.firstIndex(of: ":"),
              let desktop = Int(text[text.index(after: text.startIndex)..<colon]),
              let micros = Int64(text[text.index(after: colon)...]) else { return nil }
        return (desktop, micros)
    }
}

/// Latencies counted in 0.1 ms buckets: memory bounded by the spread of the latencies, not
/// by their number (the follower's memory is one of the figures).
struct LatencyHistogram: Codable, Sendable {
    /// Count by bucket (tenths of a millisecond).
    private(set) var buckets: [Int: Int] = [:]
    private(set) var count = 0

    mutating func add(_ seconds: Double) {
        buckets[max(0, Int(seconds * 10_000)), default: 0] += 1
        count += 1
    }

    mutating func merge(_ other: LatencyHistogram) {
        buckets.merge(other.buckets, uniquingKeysWith: +)
        count += other.count
    }

    /// The `fraction` quantile in seconds (nearest rank, to 0.1 ms); NaN when empty.
    func quantile(_ fraction: Double) -> Double {
        guard count > 0 else { return .nan }
        let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for bucket in buckets.keys.sorted() {
            seen += buckets[bucket]!
            if seen >= rank { return Double(bucket) / 10_000 }
        }
        return Double(buckets.keys.max()!) / 10_000
    }

    var longest: Double { buckets.keys.max().map { Double($0) / 10_000 } ?? .nan }
}

/// A controller following a store as a desktop's list does (its context follows the store,
/// batches reported as a list model takes them), timing every stamped change it delivers:
/// the batch's time minus the stamp's. The stamps of a batch's objects are read from the
/// store in one query right after the batch arrives, off the queue that delivered it (an
/// object saved again before the batch shows its newer stamp, as a redrawn row would; one
/// saved again after it is counted by the batch that shows it; each stamp counts once).
final class StampFollower: FetchedResultsControllerDelegate, @unchecked Sendable {
    /// What the follower saw.
    struct Figures: Codable, Sendable {
        var latencies = LatencyHistogram()
        /// Objects inserted, updated or moved in the delivered batches.
        var delivered = 0
        var batches = 0
        /// Batches that replaced the whole list (their objects are not counted).
        var reloads = 0
        /// New stamps seen, by the desktop that saved them.
        var seenByDesktop: [Int: Int] = [:]
        /// When the last batch came, wall clock, seconds since 1970.
        var lastDelivery = 0.0
        /// The longest read of one batch's stamps (part of the main-loop turn that delivers it).
        var longestRead = 0.0
    }

    private let lock = NSLock()
    private var figures = Figures()
    /// The newest stamp seen by row key: bounded by the store's rows.
    private var lastSeen: [Int64: Int64] = [:]
    private let store: PersistentStore
    private let ownDesktop: Int?
    private let context: ObjectContext
    private var controller: FetchedResultsController<ManagedObject>!
    private var following: ObservationToken?
    /// Reads the stamps of the batches delivered, one batch after another.
    private let reader = DispatchQueue(label: "StampFollower.reader")

    /// Follows `store` on `queue` (the main queue for a window's list), leaving out the
    /// stamps of `ownDesktop`.
    init(store: PersistentStore, queue: DispatchQueue, ownDesktop: Int? = nil) throws {
        self.store = store
        self.ownDesktop = ownDesktop
        context = ObjectContext(store: store, queue: queue)
        try context.performAndWait {
            controller = FetchedResultsController(fetchRequest: WorldCupStore.request, managedObjectContext: context,
                                                  sectionNameKeyPath: WorldCupStore.sectionNameKeyPath)
            controller.changeReporting = .batches
            controller.delegate = self
            try controller.performFetch()
            following = try context.followStore()
        }
    }

    /// What was seen so far, once the stamps of every batch delivered are read.
    var seen: Figures {
        reader.sync {}
        return lock.withLock { figures }
    }

    /// The newest stamp seen of each row, in microseconds, by row key (those of the last
    /// batches may still be being read).
    var newestStamps: [Int64: Int64] { lock.withLock { lastSeen } }

    /// Stops following the store.
    func stop() {
        context.performAndWait { following = nil }
        reader.sync {}
    }

    func controller(_ controller: FetchedResultsController<ManagedObject>, didChangeContentWith batch: ChangeBatch) {
        let now = Stamp.nowMicros()
        let keys = batch.objectChanges.filter { $0.type != .delete }.map(\.objectID.rowKey)
        lock.withLock {
            figures.batches += 1
            figures.delivered += keys.count
            if batch.isReload { figures.reloads += 1 }
            figures.lastDelivery = Double(now) / 1_000_000
        }
        guard !keys.isEmpty else { return }
        // Read on a queue of the follower's own, after the turn that delivered the batch: a
        // window's list makes no such read, so the measuring does not lengthen the turns whose
        // stalls are measured (it took 60–104 ms of them in the firehose, session 35).
        reader.async { [self] in
            let started = Measure.now()
            let stamps = (try? readStamps(keys)) ?? []
            let read = Measure.now() - started
            lock.withLock {
                figures.longestRead = max(figures.longestRead, read)
                // A stamp newer than the batch was saved after it: the batch that shows it
                // counts it.
                for (key, text) in stamps {
                    guard let stamp = Stamp.parse(text), stamp.desktop != ownDesktop, stamp.micros <= now, lastSeen[key] != stamp.micros else { continue }
                    lastSeen[key] = stamp.micros
                    figures.seenByDesktop[stamp.desktop, default: 0] += 1
                    figures.latencies.add(Double(now - stamp.micros) / 1_000_000)
                }
            }
        }
    }

    /// The stamps of the rows `keys` names, as the store holds them now.
    private func readStamps(_ keys: [Int64]) throws -> [(Int64, String)] {
        let list = "[" + keys.map(String.init).joined(separator: ",") + "]"
        // One statement (no transaction around it), prepared once: the measuring takes
        // as little as it can of the processor it measures.
        return try store.database.unsafeRead { db in
            try Row.fetchAll(db.cachedStatement(sql: #"SELECT Z_PK, "imageName" FROM "Team" WHERE Z_PK IN (SELECT value FROM json_each(?))"#),
                             arguments: [list]).compactMap { row -> (Int64, String)? in
                let key: Int64 = row[0], text: String? = row[1]
                return text.map { (key, $0) }
            }
        }
    }
}
