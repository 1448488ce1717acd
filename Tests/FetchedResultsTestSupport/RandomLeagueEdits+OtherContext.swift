import ObjectStore
import TestSupport

extension RandomLeagueEdits {
    /// Another context on the same store that edits saved players (their score, and their
    /// zone by ``zone``) and a saved club (its rank, or it deletes it), then saves; the edited
    /// context merges that save. Both take the last save (`.editWins`): they save over each
    /// other's fields on purpose (the default policy would refuse such a save; ObjectStoreTests'
    /// ConflictTests cover that).
    public struct OtherContext {
        /// How the edited context learns of the other's save.
        public enum Merge {
            /// The changes the other context's save announced.
            case didSave
            /// The objects and keys the other context set, as updates, as a caller that knows
            /// what changed elsewhere would say.
            case declaredUpdates
        }

        /// How often a step is the other context's.
        public var chance: Chance
        /// How many players it edits in a step, and in a bulk step.
        public var players: Int, bulkPlayers: Int
        public var zone: Chance
        /// How often it deletes the club instead of ranking it, while there are more clubs than `whileMoreThan`.
        public var clubDeletion: (chance: Chance, whileMoreThan: Int)?
        public var merge: Merge

        public init(chance: Chance, players: Int, bulkPlayers: Int = 0, zone: Chance = .always,
                    clubDeletion: (chance: Chance, whileMoreThan: Int)? = nil, merge: Merge) {
            self.chance = chance
            self.players = players
            self.bulkPlayers = bulkPlayers
            self.zone = zone
            self.clubDeletion = clubDeletion
            self.merge = merge
        }
    }

    /// The other context's step: see ``OtherContext``.
    func editInOtherContext(_ other: ObjectContext, _ settings: OtherContext) throws {
        var updated: [ObjectID: Set<String>] = [:]
        var deleted: Set<ObjectID> = []
        let savedPlayers = players.filter { !$0.objectID.isTemporaryID }
        for _ in 0..<(isBulk ? settings.bulkPlayers : settings.players) {
            guard let mine = savedPlayers.randomElement(using: &rng) else { break }
            let player = try other.existingObject(with: mine.objectID)
            touched.append(mine)
            try player.setValue(Int.random(in: scores, using: &rng), forKey: "score")
            updated[player.objectID, default: []].insert("score")
            if settings.zone.draw(&rng) {
                try player.setValue(zones.randomElement(using: &rng)!, forKey: "zone")
                updated[player.objectID, default: []].insert("zone")
            }
            log.append("other context: \(player.objectID)")
        }
        if let mine = clubs.filter({ !$0.objectID.isTemporaryID }).randomElement(using: &rng) {
            let club = try other.existingObject(with: mine.objectID)
            touched.append(mine)
            if let deletion = settings.clubDeletion, deletion.chance.draw(&rng) && clubs.count > deletion.whileMoreThan {
                try other.delete(club)
                deleted.insert(club.objectID)
                log.append("other context deletes \(club.objectID)")
            } else {
                try club.setValue(Int.random(in: 0...4, using: &rng), forKey: "rank")
                updated[club.objectID, default: []].insert("rank")
                log.append("other context: rank of \(club.objectID)")
            }
        }
        try other.save()
        switch settings.merge {
        case .didSave:
            for changes in otherSaves { context.mergeChanges(fromContextDidSave: changes) }
            otherSaves = []
        case .declaredUpdates:
            context.mergeChanges(fromContextDidSave: ObjectChanges(updated: updated, deleted: deleted))
        }
        clubs.removeAll { $0.managedObjectContext == nil || $0.isDeleted }
        players.removeAll { $0.managedObjectContext == nil || $0.isDeleted }
    }
}
