import Foundation
import GRDB
import Datasets
import ObjectStore
import struct ObjectStore.FetchRequest

/// The benchmark's data: the World Cup viewer's `Team` entity with many more teams.
enum WorldCupStore {
    static let zones = ["AFC", "CAF", "CONCACAF", "CONMEBOL", "OFC", "UEFA"]

    /// The viewer's own World Cup model (data/worldcup/model.json), so that what is measured
    /// is what the viewer opens.
    static let model: Model = {
        do {
            return try Dataset.load(named: "worldcup").model
        } catch {
            fatalError("the benchmark needs the World Cup dataset: \(error)")
        }
    }()

    /// The request the viewer shows: sectioned by zone, most wins first.
    static var request: FetchRequest<ManagedObject> {
        var request = FetchRequest<ManagedObject>(entityName: "Team", sortDescriptors: [
            FetchSortDescriptor(key: "qualifyingZone"),
            FetchSortDescriptor(key: "wins", ascending: false),
            FetchSortDescriptor(key: "teamName"),
        ])
        request.fetchBatchSize = 20
        return request
    }

    static let sectionNameKeyPath = "qualifyingZone"

    /// The IDs in the controller's order, straight from GRDB: the floor. Same FROM and
    /// ORDER BY as the SQL `ObjectContext.fetchRowKeys` issues (checked at run time).
    static let floorSQL = #"SELECT t0.Z_PK FROM "Team" t0 ORDER BY t0."qualifyingZone" ASC, t0."wins" DESC, t0."teamName" ASC, t0.Z_PK"#

    static func floorIDs(_ store: PersistentStore) throws -> [Int64] {
        try store.database.read { db in try Int64.fetchAll(db, sql: floorSQL) }
    }

    /// Fills a new store with `rows` teams: random zones and wins (0-50), unique names.
    /// One transaction, one prepared statement: the store's own insert path is not what is measured.
    static func fill(_ store: PersistentStore, rows: Int, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        try store.database.write { db in
            let insert = try db.makeStatement(sql: #"INSERT INTO "Team" ("teamName", "qualifyingZone", "imageName", "wins") VALUES (?, ?, ?, ?)"#)
            for n in 0..<rows {
                let zone = zones[Int(random.next() % UInt64(zones.count))]
                let wins = Int64(random.next() % 51)
                let name = teamName(n, random: &random)
                let image: String? = n % 3 == 0 ? nil : "flag-\(n % 211)"
                try insert.execute(arguments: [name, zone, image, wins])
            }
        }
    }

    private static let syllables = ["ka", "lo", "mi", "ra", "to", "vu", "ne", "si", "da", "pe", "zo", "bu"]

    /// A unique, pronounceable name: random syllables, then the row number.
    private static func teamName(_ n: Int, random: inout SplitMix64) -> String {
        var name = ""
        for _ in 0..<(2 + Int(random.next() % 3)) { name += syllables[Int(random.next() % UInt64(syllables.count))] }
        return name.prefix(1).uppercased() + name.dropFirst() + " \(n)"
    }
}

/// A small, seeded generator, so every run builds the same store.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
