import Foundation
import GRDB
import ObjectStore
import XCTest
@_exported import ObjectStoreTestSupport
@_exported import TestSupport

typealias Team = WorldCup.Team

final class FailedBankInfo: ManagedObject {
    @Attribute var name: String
    @Attribute var city: String
    @Attribute var state: String
    @Relationship var details: FailedBankDetails?
}

final class FailedBankDetails: ManagedObject {
    @Attribute var closeDate: Date
    @Attribute var zip: Int
    @Relationship var info: FailedBankInfo?
}

enum Fixtures {
    static let team = WorldCup.team

    static func worldCupModel() throws -> Model { try WorldCup.model() }

    static func banksModel() throws -> Model {
        try Model(entities: [
            EntityDescription(
                name: "FailedBankInfo",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "city", type: .string),
                    AttributeDescription(name: "state", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "details", destinationEntity: "FailedBankDetails", inverseName: "info", deleteRule: .cascade),
                ],
                objectClass: FailedBankInfo.self),
            EntityDescription(
                name: "FailedBankDetails",
                attributes: [
                    AttributeDescription(name: "closeDate", type: .date),
                    AttributeDescription(name: "zip", type: .integer, defaultValue: .integer(0)),
                ],
                relationships: [
                    RelationshipDescription(name: "info", destinationEntity: "FailedBankInfo", inverseName: "details"),
                ],
                objectClass: FailedBankDetails.self),
        ])
    }

    /// Lists of to-do items, defined in Swift without classes: key-value access only.
    /// Deleting a list cascades to its items; a tag refuses deletion while items use it.
    static func todoModel() throws -> Model {
        try Model(entities: [
            EntityDescription(
                name: "List",
                attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [
                    RelationshipDescription(name: "items", destinationEntity: "Item", inverseName: "list", isToMany: true, deleteRule: .cascade),
                ]),
            EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "done", type: .bool, defaultValue: .bool(false)),
                ],
                relationships: [
                    RelationshipDescription(name: "list", destinationEntity: "List", inverseName: "items"),
                    RelationshipDescription(name: "tag", destinationEntity: "Tag", inverseName: "items"),
                ],
                validator: { item in
                    if case .string(let name) = item.attributeValue(forKey: "name"),
                       name.trimmingCharacters(in: .whitespaces).isEmpty {
                        throw ValidationError(key: "name", "needs a name")
                    }
                }),
            EntityDescription(
                name: "Tag",
                attributes: [AttributeDescription(name: "label", type: .string)],
                relationships: [
                    RelationshipDescription(name: "items", destinationEntity: "Item", inverseName: "tag", isToMany: true, deleteRule: .deny),
                ]),
        ])
    }

    /// A file store for `model` in a fresh temporary folder.
    static func store(_ model: Model, _ test: XCTestCase, sqlLog: (@Sendable (String) -> Void)? = nil) throws -> PersistentStore {
        try PersistentStore(url: temporaryFolder(test).appendingPathComponent("store.sqlite"), model: model, sqlLog: sqlLog)
    }

    /// `teams.sqlite` in a temporary folder: a closed World Cup store with the teams, its WAL
    /// folded into the file so that the file's bytes are the whole store.
    static func closedWorldCupFile(_ test: XCTestCase) throws -> URL {
        let url = try temporaryFolder(test).appendingPathComponent("teams.sqlite")
        do {
            try insertTeams(into: ObjectContext(store: try PersistentStore(url: url, model: worldCupModel())))
        }
        try DatabaseQueue(path: url.path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        return url
    }

    static var worldCupTeams: [(name: String, zone: String)] { WorldCup.allTeams }

    /// Inserts the World Cup teams (``WorldCup/allTeams``) and saves.
    @discardableResult
    static func insertTeams(into context: ObjectContext) throws -> [Team] {
        try WorldCup.insertAllTeams(into: context)
    }
}

/// Records every event a context posts.
final class EventRecorder {
    private(set) var events: [ContextEvent] = []
    private var token: ObservationToken?

    init(_ context: ObjectContext) {
        token = context.addObserver { [unowned self] in self.events.append($0) }
    }

    var objectsDidChange: [ObjectChanges] {
        events.compactMap { if case .objectsDidChange(let c) = $0 { return c } else { return nil } }
    }

    var saves: [ObjectChanges] {
        events.compactMap { if case .didSave(let c) = $0 { return c } else { return nil } }
    }

    func reset() { events = [] }
}
