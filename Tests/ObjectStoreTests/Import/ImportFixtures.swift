import Foundation
import ObjectStore
import XCTest

/// Models, files and readers of the import tests: real stores and files in a temporary folder.
enum ImportFixtures {
    /// One attribute of every type.
    static func samplesModel() throws -> Model {
        try Model(entities: [
            EntityDescription(name: "Sample", attributes: [
                AttributeDescription(name: "name", type: .string, minLength: 1),
                AttributeDescription(name: "count", type: .integer, isOptional: true),
                AttributeDescription(name: "score", type: .double, isOptional: true),
                AttributeDescription(name: "flag", type: .bool, defaultValue: .bool(false)),
                AttributeDescription(name: "day", type: .date, isOptional: true),
                AttributeDescription(name: "data", type: .binary, isOptional: true),
                AttributeDescription(name: "note", type: .string, isOptional: true),
            ]),
        ])
    }

    /// People in departments, each with an optional manager among the people.
    static func staffModel() throws -> Model {
        try Model(entities: [
            EntityDescription(
                name: "Department",
                attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [RelationshipDescription(name: "members", destinationEntity: "Person", inverseName: "department", isToMany: true)]),
            EntityDescription(
                name: "Person",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "age", type: .integer, isOptional: true),
                ],
                relationships: [
                    RelationshipDescription(name: "department", destinationEntity: "Department", inverseName: "members", isOptional: false),
                    RelationshipDescription(name: "manager", destinationEntity: "Person", inverseName: "reports"),
                    RelationshipDescription(name: "reports", destinationEntity: "Person", inverseName: "manager", isToMany: true),
                ]),
        ])
    }

    /// A store file for `model` in `folder`.
    static func store(_ model: Model, in folder: URL) throws -> PersistentStore {
        try PersistentStore(url: folder.appendingPathComponent("store.sqlite"), model: model)
    }

    /// Writes `text` to the file `name` in `folder`.
    @discardableResult
    static func write(_ text: String, to name: String, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// The values of `keys` of every object of `entity`, in the order they were saved.
    static func rows(_ store: PersistentStore, _ entity: String, _ keys: [String]) throws -> [[Value]] {
        let context = ObjectContext(store: store, queue: DispatchQueue(label: "rows"))
        return try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: entity)).map { object in
                keys.map { object.attributeValue(forKey: $0) }
            }
        }
    }

    /// The teams' names, in the order they were saved.
    static func teamNames(_ store: PersistentStore) throws -> [String] {
        try rows(store, "Team", ["teamName"]).map { if case .string(let name) = $0[0] { name } else { "" } }
    }

    /// A CSV file of `count` teams named `Team 1`, `Team 2`...; the record of team n is on line n + 1.
    static func teamsCSV(_ count: Int, wins: (Int) -> String = { String($0 % 7) }) -> String {
        "teamName,qualifyingZone,wins\n" + (1...count).map { "Team \($0),Zone \($0 % 5),\(wins($0))\n" }.joined()
    }

    /// The ImportError `body` throws; fails the test when it throws none or another error.
    static func importError<T>(_ body: () throws -> T, file: StaticString = #filePath, line: UInt = #line) -> ImportError? {
        do {
            _ = try body()
            XCTFail("expected an ImportError", file: file, line: line)
        } catch let error as ImportError {
            return error
        } catch {
            XCTFail("expected an ImportError, got \(error)", file: file, line: line)
        }
        return nil
    }
}

/// A value shared with the importer's progress callback, which may run on another thread.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }
}
