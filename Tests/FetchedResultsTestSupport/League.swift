import FetchedResults
import Foundation
import ObjectStore
import TestSupport
import XCTest

/// Players in clubs, the model of the controller, list-model and GTK tests: sections by zone
/// (players without one make a section of their own), sorts by score and across the club
/// relationship, or sections from the clubs themselves (a section entity, empty clubs included).
public enum League {
    /// The zones of players: random edits draw from them, and `nil` is a zone too.
    public static let zones: [String?] = ["Africa", "Asia", "Europe", "Oceania", nil]
    /// The names random edits draw: mixed case, and two ("Émile", "Emile") that differ only by a diacritic.
    public static let names = ["Ana", "bo", "Cy", "Dee", "Émile", "Emile", "fay", "Gus", "Hal", "Ivy"]

    public static func model() throws -> Model {
        try Model(entities: [
            EntityDescription(
                name: "Club",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "rank", type: .integer, defaultValue: .integer(0)),
                ],
                relationships: [RelationshipDescription(name: "players", destinationEntity: "Player", inverseName: "club", isToMany: true)]),
            EntityDescription(
                name: "Player",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "zone", type: .string, isOptional: true),
                    AttributeDescription(name: "score", type: .integer, defaultValue: .integer(0)),
                    AttributeDescription(name: "active", type: .bool, defaultValue: .bool(true)),
                    AttributeDescription(name: "note", type: .string, isOptional: true),
                ],
                relationships: [RelationshipDescription(name: "club", destinationEntity: "Club", inverseName: "players")]),
        ])
    }

    /// A context on a new SQLite file in a temporary folder of `test`.
    public static func context(_ test: XCTestCase) throws -> ObjectContext {
        let store = try PersistentStore(url: temporaryFolder(test).appendingPathComponent("league.sqlite"), model: model())
        return ObjectContext(store: store)
    }

    /// Inserts clubs "Club 0", "Club 1", ... ranked 0, 1, ... (unsaved).
    public static func insertClubs(_ count: Int, into context: ObjectContext) throws -> [ManagedObject] {
        try (0..<count).map { i in
            let club = try context.insert(entityName: "Club")
            try club.setValue("Club \(i)", forKey: "name")
            try club.setValue(i, forKey: "rank")
            return club
        }
    }

    /// Inserts a player (unsaved).
    @discardableResult
    public static func insertPlayer(_ context: ObjectContext, name: String, zone: String? = nil, score: Int,
                                    club: ManagedObject? = nil) throws -> ManagedObject {
        let player = try context.insert(entityName: "Player")
        try player.setValue(name, forKey: "name")
        try player.setValue(zone, forKey: "zone")
        try player.setValue(score, forKey: "score")
        if let club { try player.setValue(club, forKey: "club") }
        return player
    }

    /// Players by zone, best first within a zone, then by name.
    public static func playersByZone(_ predicate: FetchPredicate? = nil) -> FetchRequest<ManagedObject> {
        FetchRequest(entityName: "Player", predicate: predicate, sortDescriptors: [
            FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "score", ascending: false), FetchSortDescriptor(key: "name"),
        ])
    }

    /// Players by score (lowest first), then by name.
    public static func playersByScore(_ predicate: FetchPredicate? = nil) -> FetchRequest<ManagedObject> {
        FetchRequest(entityName: "Player", predicate: predicate, sortDescriptors: [FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "name")])
    }

    /// Clubs by rank, then by name.
    public static func clubsByRank(_ predicate: FetchPredicate? = nil) -> FetchRequest<ManagedObject> {
        FetchRequest(entityName: "Club", predicate: predicate, sortDescriptors: [FetchSortDescriptor(key: "rank"), FetchSortDescriptor(key: "name")])
    }

    /// Players sectioned by zone (``playersByZone(_:)``).
    public static func byZone(_ context: ObjectContext) -> FetchedResultsController<ManagedObject> {
        FetchedResultsController(fetchRequest: playersByZone(), managedObjectContext: context, sectionNameKeyPath: "zone")
    }

    /// `players` in sections from `clubs`, each named by its club's name.
    public static func sectionsFromClubs(_ players: FetchRequest<ManagedObject>, clubs: FetchRequest<ManagedObject> = clubsByRank(),
                                         in context: ObjectContext) -> FetchedResultsController<ManagedObject> {
        FetchedResultsController(fetchRequest: players, sectionFetchRequest: clubs, sectionRelationshipKeyPath: "club",
                                 sectionNameKey: "name", managedObjectContext: context)
    }
}
