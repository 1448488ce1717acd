import Foundation
import ObjectStore
import TestSupport

/// Random edits of a league's players and clubs, drawn from a ``SeededGenerator`` so that a
/// seed replays a run: the edits of the property tests of the controller, the list model and
/// the GTK list. Each test says which edits it draws (``edits``) and from which values.
///
/// A ``step(_:)`` makes a few edits (many in a bulk step), then saves or only processes them;
/// or, with an ``OtherContext``, sometimes lets another context edit saved objects and save,
/// and merges that save instead.
public final class RandomLeagueEdits {
    /// One kind of edit. A player or club edited is drawn among those not deleted.
    public enum Edit {
        case insertPlayer
        /// Deletes a player while there are more than the number.
        case deletePlayer(whileMoreThan: Int)
        case zone, score, active, note, name
        /// Sets the player's club, or none (``clubChance``).
        case club
        /// A club adds the player to its to-many `players`.
        case joinClub
        case clubRank, clubName
        /// A club's rank or, on the other side of a coin, its name.
        case clubRankOrName
        /// Inserts "New club <step>", rank 0, while there are fewer clubs than the number.
        case insertClub(whileFewerThan: Int = .max)
        /// Inserts a club of a drawn name and rank while there are fewer than the number.
        case insertDrawnClub(whileFewerThan: Int)
        /// Deletes a club while there are more than the number.
        case deleteClub(whileMoreThan: Int)
        /// An edit of the test's own (a new fetch request...); returns what it did.
        case custom((inout SeededGenerator) throws -> String)
    }

    /// How often something happens. Each is drawn the way the tests drew it before they
    /// shared this generator, so that a seed still replays the same run.
    public enum Chance {
        case always, never
        /// `Bool.random()`.
        case half
        /// One draw in `n`.
        case oneIn(Int)
        /// All draws but one in `n`.
        case allButOneIn(Int)

        func draw(_ rng: inout SeededGenerator) -> Bool {
            switch self {
            case .always: true
            case .never: false
            case .half: Bool.random(using: &rng)
            case .oneIn(let n): Int.random(in: 0..<n, using: &rng) == 0
            case .allButOneIn(let n): Int.random(in: 0..<n, using: &rng) != 0
            }
        }
    }

    /// A value a new player gets.
    public enum PlayerValue {
        /// A name drawn from ``names``.
        case name
        /// "N<step>-<number of players>": a name of its own.
        case numberedName
        case zone, score, club
        /// Active three times in four.
        case active
    }

    /// How many edits a bulk step makes: more than a controller places one by one.
    private static let bulkEdits = 80...160

    let context: ObjectContext
    var rng: SeededGenerator
    /// The players and clubs not deleted.
    var players: [ManagedObject]
    var clubs: [ManagedObject]

    /// The edits a step draws from, each as likely as its share of the list.
    public var edits: [Edit] = []
    /// The edit made when the one drawn cannot be (a deletion that would leave too few...).
    public var otherwise: Edit = .name
    /// What a new player gets, in the order drawn.
    public var newPlayer: [PlayerValue] = [.name, .zone, .score, .active, .club]
    public var zones = League.zones
    public var names = League.names
    public var scores = 0...5
    /// The numbers of club names ("Club 3").
    public var clubNumbers = 0...9
    /// How often a new or re-clubbed player gets a club (else none).
    public var clubChance = Chance.half
    /// How often a step is a bulk one.
    public var bulk = Chance.never
    /// How often a step saves (else it only processes its changes).
    public var saves = Chance.half
    /// Whether a step works out ``edited``, which reads every registered player's club.
    public var tracksEditedPlayers = false

    /// What the last step did, for failure messages.
    public internal(set) var log: [String] = []
    var isBulk = false
    /// The players the last step edited (when ``tracksEditedPlayers``): by their own values,
    /// or as players of a club it edited (before or after), under their IDs now and their
    /// temporary IDs of before their first save.
    public private(set) var edited: Set<ObjectID> = []

    private let other: (settings: OtherContext, context: ObjectContext)?
    var otherSaves: [ObjectChanges] = []
    private var otherObservation: ObservationToken?
    var touched: [ManagedObject] = []

    /// Edits of `context` from `rng`, on `players` and `clubs` already there.
    public init(context: ObjectContext, rng: SeededGenerator, otherContext: OtherContext? = nil,
                players: [ManagedObject] = [], clubs: [ManagedObject] = []) {
        self.context = context
        self.rng = rng
        self.players = players
        self.clubs = clubs
        if let otherContext {
            let other = ObjectContext(store: context.store)
            other.automaticallyMergesChangesFromStore = false
            context.mergePolicy = .editWins
            other.mergePolicy = .editWins
            self.other = (otherContext, other)
        } else {
            self.other = nil
        }
        if otherContext?.merge == .didSave {
            otherObservation = other?.context.addObserver { [unowned self] event in
                if case .didSave(let changes) = event { otherSaves.append(changes) }
            }
        }
    }

    /// Inserts clubs (``League/insertClubs(_:into:)``) and random players, and saves.
    public func populate(clubs clubCount: Int, players playerCount: Int) throws {
        clubs += try League.insertClubs(clubCount, into: context)
        for _ in 0..<playerCount { players.append(try insertPlayer(step: 0)) }
        try context.save()
    }

    /// A step: see the type's description.
    public func step(_ step: Int) throws {
        log = []
        touched = []
        let clubsBefore = tracksEditedPlayers ? clubsOfPlayers() : [:]
        isBulk = bulk.draw(&rng)
        if let other, other.settings.chance.draw(&rng) {
            try editInOtherContext(other.context, other.settings)
        } else {
            for _ in 0..<Int.random(in: isBulk ? Self.bulkEdits : 1...4, using: &rng) {
                if try !make(edits[Int.random(in: 0..<edits.count, using: &rng)], step: step) {
                    try make(otherwise, step: step)
                }
            }
            if saves.draw(&rng) { try context.save() } else { context.processPendingChanges() }
        }
        if tracksEditedPlayers { edited = editedPlayers(clubsBefore: clubsBefore) }
    }

    /// The last step's edits, or their number in a bulk step.
    public var summary: String { isBulk ? "\(log.count) edits (bulk)" : "\(log)" }

    /// Makes `edit`; false when it cannot be made now.
    @discardableResult
    private func make(_ edit: Edit, step: Int) throws -> Bool {
        switch edit {
        case .insertPlayer:
            players.append(try insertPlayer(step: step))
            log.append("insert")
        case .deletePlayer(let minimum):
            return try deleteOne(of: &players, whileMoreThan: minimum)
        case .zone:
            try setDrawnPlayer("zone") { zones.randomElement(using: &rng)! }
        case .score:
            try setDrawnPlayer("score") { Int.random(in: scores, using: &rng) }
        case .active:
            try setDrawnPlayer("active") { Bool.random(using: &rng) }
        case .note:
            try setDrawnPlayer("note") { "note \(step)" }
        case .name:
            try setDrawnPlayer("name") { names.randomElement(using: &rng)! }
        case .club:
            let player = drawPlayer()
            let club = drawClubOrNone()
            try player.setValue(club, forKey: "club")
            log.append("club of \(player.objectID) = \(club?.objectID.description ?? "nil")")
        case .joinClub:
            let player = drawPlayer()
            if let club = clubs.randomElement(using: &rng) {
                touched.append(club)
                try club.addObject(player, toRelationship: "players")
                log.append("\(club.objectID) adds \(player.objectID)")
            }
        case .clubRank:
            if let club = clubs.randomElement(using: &rng) {
                touched.append(club)
                try club.setValue(Int.random(in: 0...4, using: &rng), forKey: "rank")
                log.append("rank of \(club.objectID)")
            }
        case .clubName:
            if let club = clubs.randomElement(using: &rng) {
                touched.append(club)
                try club.setValue("Club \(Int.random(in: clubNumbers, using: &rng))", forKey: "name")
                log.append("name of \(club.objectID)")
            }
        case .clubRankOrName:
            if let club = clubs.randomElement(using: &rng) {
                touched.append(club)
                if Bool.random(using: &rng) {
                    try club.setValue(Int.random(in: 0...4, using: &rng), forKey: "rank")
                } else {
                    try club.setValue("Club \(Int.random(in: clubNumbers, using: &rng))", forKey: "name")
                }
                log.append("club \(club.objectID)")
            }
        case .insertClub(let maximum):
            guard clubs.count < maximum else { return false }
            try insertClub(name: "New club \(step)")
        case .insertDrawnClub(let maximum):
            guard clubs.count < maximum else { return false }
            try insertClub(name: "Club \(Int.random(in: clubNumbers, using: &rng))", rank: Int.random(in: 0...4, using: &rng))
        case .deleteClub(let minimum):
            return try deleteOne(of: &clubs, whileMoreThan: minimum)
        case .custom(let edit):
            log.append(try edit(&rng))
        }
        return true
    }

    /// Deletes one of `objects`, drawn, while there are more than `minimum`; false when there are not.
    private func deleteOne(of objects: inout [ManagedObject], whileMoreThan minimum: Int) throws -> Bool {
        guard objects.count > minimum else { return false }
        let object = objects.remove(at: Int.random(in: 0..<objects.count, using: &rng))
        touched.append(object)
        log.append("delete \(object.objectID)")
        try context.delete(object)
        return true
    }

    private func insertClub(name: String, rank: Int? = nil) throws {
        let club = try context.insert(entityName: "Club")
        try club.setValue(name, forKey: "name")
        if let rank { try club.setValue(rank, forKey: "rank") }
        clubs.append(club)
        log.append("club inserted")
    }

    private func insertPlayer(step: Int) throws -> ManagedObject {
        let player = try context.insert(entityName: "Player")
        for value in newPlayer {
            switch value {
            case .name: try player.setValue(names.randomElement(using: &rng)!, forKey: "name")
            case .numberedName: try player.setValue("N\(step)-\(players.count)", forKey: "name")
            case .zone: try player.setValue(zones.randomElement(using: &rng)!, forKey: "zone")
            case .score: try player.setValue(Int.random(in: scores, using: &rng), forKey: "score")
            case .active: try player.setValue(Chance.allButOneIn(4).draw(&rng), forKey: "active")
            case .club: try player.setValue(drawClubOrNone(), forKey: "club")
            }
        }
        return player
    }

    /// Sets `key` of a drawn player to `value`, drawn after the player.
    private func setDrawnPlayer(_ key: String, to value: () -> Any?) throws {
        let player = drawPlayer()
        try player.setValue(value(), forKey: key)
        log.append("\(key) of \(player.objectID)")
    }

    private func drawPlayer() -> ManagedObject {
        let player = players.randomElement(using: &rng)!
        touched.append(player)
        return player
    }

    private func drawClubOrNone() -> ManagedObject? {
        clubChance.draw(&rng) ? clubs.randomElement(using: &rng) : nil
    }

    /// Each player's club, by the objects themselves (IDs change when saved).
    private func clubsOfPlayers() -> [ObjectIdentifier: ObjectIdentifier] {
        guard !clubs.isEmpty else { return [:] }
        var result: [ObjectIdentifier: ObjectIdentifier] = [:]
        for object in context.registeredObjects where object.entity.name == "Player" && !object.isDeleted {
            if let club = (try? object.value(forKey: "club")) as? ManagedObject { result[ObjectIdentifier(object)] = ObjectIdentifier(club) }
        }
        return result
    }

    private func editedPlayers(clubsBefore: [ObjectIdentifier: ObjectIdentifier]) -> Set<ObjectID> {
        let clubsAfter = clubsOfPlayers()
        let touchedObjects = Set(touched.map(ObjectIdentifier.init))
        var edited = Set<ObjectID>()
        for object in context.registeredObjects.union(touched) where object.entity.name == "Player" {
            let me = ObjectIdentifier(object)
            guard touchedObjects.contains(me) || clubsBefore[me].map(touchedObjects.contains) == true
                    || clubsAfter[me].map(touchedObjects.contains) == true else { continue }
            edited.insert(object.objectID)
            if let temporary = object.temporaryObjectID { edited.insert(temporary) }
        }
        return edited
    }
}
