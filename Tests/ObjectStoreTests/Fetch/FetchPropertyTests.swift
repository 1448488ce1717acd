import Foundation
import ObjectStore
import TestSupport
import XCTest

/// Invariant 1 through the real context: after random unsaved and saved edits, what SQLite
/// answers for a fetch (pending changes included) equals filtering and sorting the live
/// objects in memory with the same predicate and sort descriptors.
final class FetchPropertyTests: XCTestCase {

    private static let strings: [String?] = [
        nil, "", "a", "A", "apple", "Apple", "APPLE", "éclair", "e\u{301}clair", "Éclair", "eclair",
        "zebra", "Zoë", "zoe", "straße", "STRASSE", "日本", "😀 smile", "naïve", "Naive", "b", "B%", "a_b",
    ]

    private static func model() throws -> Model {
        try Model(entities: [
            EntityDescription(
                name: "Owner",
                attributes: [
                    AttributeDescription(name: "name", type: .string, isOptional: true),
                    AttributeDescription(name: "rank", type: .integer, isOptional: true),
                ],
                relationships: [RelationshipDescription(name: "items", destinationEntity: "Item", inverseName: "owner", isToMany: true)]),
            EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "name", type: .string, isOptional: true),
                    AttributeDescription(name: "score", type: .double, isOptional: true),
                    AttributeDescription(name: "count", type: .integer, defaultValue: .integer(0)),
                    AttributeDescription(name: "flag", type: .bool, defaultValue: .bool(false)),
                    AttributeDescription(name: "when", type: .date, isOptional: true),
                ],
                relationships: [RelationshipDescription(name: "owner", destinationEntity: "Owner", inverseName: "items")]),
        ])
    }

    private func randomValue(for key: String, _ rng: inout SeededGenerator) -> Any? {
        switch key {
        case "name": return Self.strings.randomElement(using: &rng)!
        case "score": return Bool.random(using: &rng) ? nil : Double(Int.random(in: -3...3, using: &rng)) / 2
        case "count", "rank": return Int.random(in: -2...3, using: &rng)
        case "flag": return Bool.random(using: &rng)
        default: return Bool.random(using: &rng) ? nil : Date(timeIntervalSince1970: Double(Int.random(in: 0...4, using: &rng)) * 86400)
        }
    }

    private func randomPredicate(_ rng: inout SeededGenerator, depth: Int = 0) throws -> FetchPredicate {
        if depth < 2 && Int.random(in: 0..<3, using: &rng) == 0 {
            let lhs = try randomPredicate(&rng, depth: depth + 1), rhs = try randomPredicate(&rng, depth: depth + 1)
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return lhs && rhs
            case 1: return lhs || rhs
            default: return !lhs
            }
        }
        let options = ["", "[c]", "[d]", "[cd]"].randomElement(using: &rng)!
        switch Int.random(in: 0..<7, using: &rng) {
        case 0, 1:
            let key = ["name", "owner.name"].randomElement(using: &rng)!
            let op = ["==", "!=", "<", ">=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE"].randomElement(using: &rng)!
            let value = Self.strings.randomElement(using: &rng)! ?? "a"
            let pattern = op == "LIKE" ? String(value.prefix(2)) + "*" : value
            return try FetchPredicate(format: "%K \(op)\(options) %@", key, pattern)
        case 2:
            let key = ["score", "count", "owner.rank"].randomElement(using: &rng)!
            let op = ["==", "!=", "<", "<=", ">", ">="].randomElement(using: &rng)!
            return try FetchPredicate(format: "%K \(op) %@", key, Double(Int.random(in: -4...4, using: &rng)) / 2)
        case 3:
            return try FetchPredicate(format: "%K == nil", ["name", "score", "when", "owner", "owner.name"].randomElement(using: &rng)!)
        case 4:
            return try FetchPredicate(format: "flag == %@", Bool.random(using: &rng))
        case 5:
            return try FetchPredicate(format: "when < %@", Date(timeIntervalSince1970: Double(Int.random(in: 0...4, using: &rng)) * 86400))
        default:
            let values = (0..<3).map { _ in Self.strings.randomElement(using: &rng)! ?? "" }
            return try FetchPredicate(format: "name IN\(options) %@", values)
        }
    }

    private func randomSorts(_ rng: inout SeededGenerator) -> [FetchSortDescriptor] {
        let keys = ["name", "score", "count", "flag", "when", "owner.name", "owner.rank"].shuffled(using: &rng)
        return keys.prefix(Int.random(in: 0...3, using: &rng)).map { key in
            let options: StringComparisonOptions = [[], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive]]
                .randomElement(using: &rng)!
            return FetchSortDescriptor(key: key, ascending: Bool.random(using: &rng), options: key.hasSuffix("name") ? options : [])
        }
    }

    func testFetchesWithPendingChangesEqualTheInMemoryAnswer() throws {
        let seed = SeededGenerator.seed()
        var rng = SeededGenerator(seed: seed)
        let context = ObjectContext(store: try Fixtures.store(Self.model(), self))
        var owners: [ManagedObject] = []
        var items: [ManagedObject] = []
        var checks = 0

        for round in 0..<30 {
            // Random edits, some saved, some left pending.
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                switch Int.random(in: 0..<10, using: &rng) {
                case 0 where owners.count < 8, 1 where owners.isEmpty:
                    let owner = try context.insert(entityName: "Owner")
                    try owner.setValue(randomValue(for: "name", &rng), forKey: "name")
                    try owner.setValue(randomValue(for: "rank", &rng), forKey: "rank")
                    owners.append(owner)
                case 2, 3 where items.count < 60:
                    let item = try context.insert(entityName: "Item")
                    for key in ["name", "score", "count", "flag", "when"] { try item.setValue(randomValue(for: key, &rng), forKey: key) }
                    items.append(item)
                case 4 where !items.isEmpty && !owners.isEmpty:
                    try items.randomElement(using: &rng)!.setValue(Bool.random(using: &rng) ? owners.randomElement(using: &rng)! : nil, forKey: "owner")
                case 5 where !items.isEmpty:
                    try context.delete(items.remove(at: Int.random(in: 0..<items.count, using: &rng)))
                case 6 where !owners.isEmpty && Int.random(in: 0..<4, using: &rng) == 0:
                    try context.delete(owners.remove(at: Int.random(in: 0..<owners.count, using: &rng)))
                case 7 where !owners.isEmpty:
                    let key = Bool.random(using: &rng) ? "name" : "rank"
                    try owners.randomElement(using: &rng)!.setValue(randomValue(for: key, &rng), forKey: key)
                default:
                    guard let item = items.randomElement(using: &rng) else { continue }
                    let key = ["name", "score", "count", "flag", "when"].randomElement(using: &rng)!
                    try item.setValue(randomValue(for: key, &rng), forKey: key)
                }
            }
            if round % 3 == 0 { try context.save() }

            for _ in 0..<8 {
                var request = FetchRequest<ManagedObject>(entityName: "Item")
                request.predicate = Bool.random(using: &rng) ? try randomPredicate(&rng) : nil
                request.sortDescriptors = randomSorts(&rng)
                if Int.random(in: 0..<3, using: &rng) == 0 {
                    request.fetchLimit = Int.random(in: 0...10, using: &rng)
                    request.fetchOffset = Int.random(in: 0...5, using: &rng)
                }
                var expected = items.filter { request.predicate?.evaluate(with: $0) ?? true }
                expected.sort { a, b in
                    for descriptor in request.sortDescriptors {
                        switch descriptor.compare(a, b) {
                        case .orderedAscending: return true
                        case .orderedDescending: return false
                        case .orderedSame: continue
                        }
                    }
                    return a.objectID < b.objectID
                }
                var window = expected.dropFirst(request.fetchOffset)
                if request.fetchLimit > 0 { window = window.prefix(request.fetchLimit) }
                let fetched = try context.fetch(request).objectIDs
                XCTAssertEqual(fetched, window.map(\.objectID),
                               "seed \(seed), round \(round): \(request.predicate?.description ?? "all") sorted by \(request.sortDescriptors)")
                XCTAssertEqual(try context.count(for: request), window.count, "seed \(seed)")
                checks += 1
                if fetched != window.map(\.objectID) { return }
            }
        }
        XCTAssertEqual(checks, 240)
    }
}
