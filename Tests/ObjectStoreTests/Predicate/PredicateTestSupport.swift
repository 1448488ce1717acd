import Foundation
import GRDB
@testable import ObjectStore
import XCTest

/// The model predicate tests run against: items with one attribute of every type, a
/// to-one `owner` (whose inverse `items` is to-many), a to-many `parts`, and a one-to-one
/// `detail` whose key is stored on the Detail side ("Detail.item" sorts before
/// "Item.detail"), so every way of following a relationship is covered.
enum PredicateTestModel {
    static let model: Model = try! Model(entities: [
        EntityDescription(
            name: "Item",
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: true),
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "count", type: .integer, isOptional: true),
                AttributeDescription(name: "price", type: .double, isOptional: true),
                AttributeDescription(name: "flag", type: .bool, isOptional: true),
                AttributeDescription(name: "when", type: .date, isOptional: true),
                AttributeDescription(name: "blob", type: .binary, isOptional: true),
            ],
            relationships: [
                RelationshipDescription(name: "owner", destinationEntity: "Owner", inverseName: "items"),
                RelationshipDescription(name: "detail", destinationEntity: "Detail", inverseName: "item"),
                RelationshipDescription(name: "parts", destinationEntity: "Part", inverseName: "item", isToMany: true),
            ]),
        EntityDescription(
            name: "Part",
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: true),
                AttributeDescription(name: "weight", type: .integer, isOptional: true),
            ],
            relationships: [
                RelationshipDescription(name: "item", destinationEntity: "Item", inverseName: "parts"),
            ]),
        EntityDescription(
            name: "Owner",
            attributes: [
                AttributeDescription(name: "name", type: .string, isOptional: true),
                AttributeDescription(name: "rank", type: .integer, isOptional: true),
            ],
            relationships: [
                RelationshipDescription(name: "items", destinationEntity: "Item", inverseName: "owner", isToMany: true),
            ]),
        EntityDescription(
            name: "Detail",
            attributes: [
                AttributeDescription(name: "score", type: .double, isOptional: true),
                AttributeDescription(name: "note", type: .string, isOptional: true),
            ],
            relationships: [
                RelationshipDescription(name: "item", destinationEntity: "Item", inverseName: "detail"),
            ]),
    ])

    static var item: EntityDescription { model.entity(named: "Item")! }
    static var owner: EntityDescription { model.entity(named: "Owner")! }
}

/// An object in memory: attribute values and related objects by key.
final class TestObject: KeyValueReading {
    let entity: String
    let key: Int64
    var values: [String: Value]
    var related: [String: [TestObject]] = [:]

    init(entity: String, key: Int64, values: [String: Value] = [:]) {
        self.entity = entity
        self.key = key
        self.values = values
    }

    func attributeValue(forKey key: String) -> Value { values[key] ?? .null }
    func relatedObjects(forKey key: String) -> [any KeyValueReading] { related[key] ?? [] }
    var evaluatedObjectID: ObjectID? { ObjectID(entityName: entity, primaryKey: key) }
}

/// A database file in a temporary folder, with the tables of a model and the predicate
/// functions registered as the store registers them.
func makePredicateTestDatabase(_ test: XCTestCase, model: Model = PredicateTestModel.model) throws -> DatabaseQueue {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("PredicateTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
    var configuration = Configuration()
    configuration.prepareDatabase { db in
        try SQLFunctions.register(in: db)
    }
    let database = try DatabaseQueue(path: folder.appendingPathComponent("test.sqlite").path, configuration: configuration)
    try database.write { db in
        for entity in model.entities {
            try db.execute(sql: Schema.createTableSQL(for: entity, in: model))
        }
    }
    return database
}

/// Inserts an object's row: its attributes and the keys its table stores.
func insert(_ object: TestObject, into db: Database, model: Model = PredicateTestModel.model) throws {
    let entity = model.entity(named: object.entity)!
    var columns = [Schema.primaryKey]
    var values: [DatabaseValue] = [object.key.databaseValue]
    for attribute in entity.attributes {
        columns.append(attribute.name)
        values.append((object.values[attribute.name] ?? .null).databaseValue)
    }
    for relationship in entity.relationships where model.storesForeignKey(relationship, of: entity) {
        columns.append(relationship.name)
        values.append(object.related[relationship.name]?.first.map { $0.key.databaseValue } ?? .null)
    }
    try db.execute(
        sql: "INSERT INTO \(entity.name.quotedDatabaseIdentifier) (\(columns.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))",
        arguments: StatementArguments(values))
}

/// The keys of the items SQLite selects with `predicate`, in the order of `sort` then key.
func sqlKeys(_ db: Database, _ predicate: FetchPredicate, sortedBy sort: [FetchSortDescriptor] = [], entity: EntityDescription = PredicateTestModel.item) throws -> [Int64] {
    let model = PredicateTestModel.model
    let terms = try sort.map { try $0.sqlOrderingTerm(for: entity, in: model, alias: "t0") } + ["t0.Z_PK"]
    let sql = SQL(sql: "SELECT t0.Z_PK FROM \(entity.name.quotedDatabaseIdentifier) t0 WHERE ")
        + (try predicate.sql(for: entity, in: model, alias: "t0"))
        + SQL(sql: " ORDER BY " + terms.joined(separator: ", "))
    return try Int64.fetchAll(db, SQLRequest<Int64>(literal: sql))
}

/// The keys of `objects` that match `predicate` in memory, in the order of `sort` then key.
func memoryKeys(_ objects: [TestObject], _ predicate: FetchPredicate, sortedBy sort: [FetchSortDescriptor] = []) -> [Int64] {
    objects.filter { predicate.evaluate(with: $0) }
        .sorted { a, b in
            let order = sort.compare(a, b)
            return order == .orderedSame ? a.key < b.key : order == .orderedAscending
        }
        .map(\.key)
}
