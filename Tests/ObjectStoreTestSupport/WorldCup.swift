import Foundation
import ObjectStore
import TestSupport

/// The World Cup app of the reference articles, once for every test target: teams in
/// qualifying zones, tapped to add wins. Two sets of rows, each stated here so that a test
/// can say which rows it depends on: ``teams`` (eleven, with wins: the controller's tests)
/// and ``allTeams`` (eighteen with flags: the store's tests).
public enum WorldCup {
    public final class Team: ManagedObject {
        @Attribute public var teamName: String
        @Attribute public var qualifyingZone: String
        @Attribute public var imageName: String?
        @Attribute public var wins: Int
    }

    /// The Team entity: a name of at least one character, a zone, an optional image name,
    /// wins (0 or more, 0 when inserted); indexed in the app's order.
    public static let team = EntityDescription(
        name: "Team",
        attributes: [
            AttributeDescription(name: "teamName", type: .string, minLength: 1),
            AttributeDescription(name: "qualifyingZone", type: .string),
            AttributeDescription(name: "imageName", type: .string, isOptional: true),
            AttributeDescription(name: "wins", type: .integer, defaultValue: .integer(0), minValue: .integer(0)),
        ],
        indexes: [IndexDescription(properties: ["qualifyingZone", "-wins", "teamName"])],
        objectClass: Team.self)

    public static func model() throws -> Model { try Model(entities: [team]) }

    /// In the controller's order (zone, wins descending, name):
    /// Africa: Nigeria 2, Ghana 1, Algeria 0 · Asia: Japan 1, Australia 0 ·
    /// Europe: Spain 3, Germany 2, England 1, France 0 · South America: Brazil 4, Argentina 1.
    public static let teams: [(name: String, zone: String, wins: Int)] = [
        ("Algeria", "Africa", 0), ("Ghana", "Africa", 1), ("Nigeria", "Africa", 2),
        ("Australia", "Asia", 0), ("Japan", "Asia", 1),
        ("England", "Europe", 1), ("France", "Europe", 0), ("Germany", "Europe", 2), ("Spain", "Europe", 3),
        ("Argentina", "South America", 1), ("Brazil", "South America", 4),
    ]

    /// Eighteen teams in five zones, no wins; each gets the image name `<name>-flag`.
    public static let allTeams: [(name: String, zone: String)] = [
        ("Algeria", "Africa"), ("Cameroon", "Africa"), ("Ghana", "Africa"), ("Nigeria", "Africa"),
        ("Australia", "Asia"), ("Japan", "Asia"), ("Iran", "Asia"), ("South Korea", "Asia"),
        ("Belgium", "Europe"), ("England", "Europe"), ("France", "Europe"), ("Germany", "Europe"),
        ("Costa Rica", "North America"), ("Mexico", "North America"), ("USA", "North America"),
        ("Argentina", "South America"), ("Brazil", "South America"), ("Chile", "South America"),
    ]

    /// A saved store of ``teams`` in `folder` (`worldcup.sqlite`), and a context on the main queue.
    public static func open(in folder: URL, sqlLog: SQLLog? = nil) throws -> (PersistentStore, ObjectContext) {
        let store = try PersistentStore(url: folder.appendingPathComponent("worldcup.sqlite"), model: model(),
                                        sqlLog: sqlLog?.handler)
        let context = ObjectContext(store: store)
        if try context.count(for: FetchRequest<Team>()) == 0 {
            for team in teams { try insert(team.name, team.zone, wins: team.wins, into: context) }
            try context.save()
        }
        return (store, context)
    }

    /// Inserts a team (not saved).
    @discardableResult
    public static func insert(_ name: String, _ zone: String, wins: Int = 0, into context: ObjectContext) throws -> Team {
        let team = try context.insert(Team.self)
        team.teamName = name
        team.qualifyingZone = zone
        team.wins = wins
        return team
    }

    /// Inserts ``allTeams`` with their flags and saves.
    @discardableResult
    public static func insertAllTeams(into context: ObjectContext) throws -> [Team] {
        let inserted = try allTeams.map { name, zone in
            let team = try insert(name, zone, into: context)
            team.imageName = name.lowercased() + "-flag"
            return team
        }
        try context.save()
        return inserted
    }
}
