import Foundation
import GRDB
import ObjectStore
import XCTest

/// Saves of objects another process changed since their edit began: merge policies.
///
/// "Another process" is a second `PersistentStore` on the same file (its saves do not merge
/// into the first store's contexts by themselves) or the `sqlite3` shell.
final class ConflictTests: XCTestCase {
    /// The edit under test and another process, each on a store of its own on one file.
    private struct Setup {
        let store: PersistentStore
        let context: ObjectContext
        let otherStore: PersistentStore
        let other: ObjectContext
        let teams: [Team]

        func team(_ name: String) -> Team { teams.first { $0.teamName == name }! }

        /// `name`'s team in the other process.
        func otherTeam(_ name: String) throws -> Team {
            try other.existingObject(with: team(name).objectID) as! Team
        }

        /// A row as SQLite holds it, read by a client of its own.
        func row(_ name: String) throws -> Row? {
            try DatabaseQueue(path: store.url!.path).read { db in
                try Row.fetchOne(db, sql: "SELECT wins, imageName, qualifyingZone FROM Team WHERE teamName = ?", arguments: [name])
            }
        }
    }

    private func makeSetup() throws -> Setup {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        let otherStore = try PersistentStore(url: XCTUnwrap(store.url), model: Fixtures.worldCupModel())
        return Setup(store: store, context: context, otherStore: otherStore, other: ObjectContext(store: otherStore), teams: teams)
    }

    private func sqlite(_ store: PersistentStore, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [try XCTUnwrap(store.url).path, sql]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, sql)
    }

    // MARK: The default policy

    func testTheDefaultPolicyRefusesNamingObjectAndFieldAndChangesNothing() throws {
        let s = try makeSetup()
        let ghana = s.team("Ghana")
        XCTAssertEqual(s.context.mergePolicy, .error)
        ghana.wins = 4
        let otherGhana = try s.otherTeam("Ghana")
        otherGhana.wins = 5
        try s.other.save()
        let token = try s.store.currentHistoryToken()

        XCTAssertThrowsError(try s.context.save()) { error in
            guard let error = error as? MergeConflictError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.conflicts, [MergeConflict(objectID: ghana.objectID, kind: .fieldsChanged([
                MergeConflict.Field(key: "wins", baseValue: .attribute(.integer(0)), storeValue: .attribute(.integer(5)), editedValue: .attribute(.integer(4))),
            ]))])
            XCTAssertEqual(error.description, "cannot save: \(ghana.objectID) was changed elsewhere while it was being edited: wins is 5 in the store (it was 0 when editing began; the edit sets 4). Refresh the object to take the stored values, or save with mergePolicy .editWins to overwrite them (.storeWins keeps the stored values and saves the other edits)")
        }
        XCTAssertEqual(try s.row("Ghana")?["wins"], 5, "the other change is untouched")
        XCTAssertEqual(try s.store.currentHistoryToken(), token, "nothing was written")
        XCTAssertEqual(ghana.wins, 4, "the edit stays")
        XCTAssertEqual(s.context.updatedObjects, [ghana])
        XCTAssertThrowsError(try s.context.save(), "the same conflict, as long as nothing changed")

        // The dialog's "reload": take the stored values.
        s.context.refresh(ghana, mergeChanges: false)
        XCTAssertEqual(ghana.wins, 5)
        ghana.wins = 6
        try s.context.save()
        XCTAssertEqual(try s.row("Ghana")?["wins"], 6)
    }

    func testEveryConflictOfTheSaveIsListedAndTheMessageNamesThemAll() throws {
        let s = try makeSetup()
        s.team("Ghana").wins = 1
        s.team("Ghana").qualifyingZone = "Moon"
        s.team("Chile").imageName = "mine"
        s.team("Japan").wins = 7  // not changed elsewhere
        try s.otherTeam("Ghana").wins = 2
        try s.otherTeam("Ghana").qualifyingZone = "Mars"
        try s.otherTeam("Chile").imageName = nil
        try s.other.save()
        XCTAssertThrowsError(try s.context.save()) { error in
            let error = error as! MergeConflictError
            XCTAssertEqual(error.conflicts.map(\.objectID), [s.team("Ghana").objectID, s.team("Chile").objectID].sorted())
            let ghana = error.conflicts.first { $0.objectID == s.team("Ghana").objectID }!
            XCTAssertEqual(ghana.fields.map(\.key), ["qualifyingZone", "wins"])
            XCTAssertEqual(ghana.fields[0].storeValue, .attribute(.string("Mars")))
            let chile = error.conflicts.first { $0.objectID == s.team("Chile").objectID }!
            XCTAssertEqual(chile.fields, [MergeConflict.Field(key: "imageName", baseValue: .attribute(.string("chile-flag")), storeValue: .attribute(.null), editedValue: .attribute(.string("mine")))])
            XCTAssertTrue(error.description.hasPrefix("cannot save, 2 objects were changed elsewhere while they were being edited:\n- "))
            XCTAssertTrue(error.description.contains("qualifyingZone is \"Mars\" in the store (it was \"Africa\" when editing began; the edit sets \"Moon\")"), error.description)
            XCTAssertTrue(error.description.contains("imageName is nil in the store"), error.description)
        }
        XCTAssertEqual(try s.row("Japan")?["wins"], 0, "nothing of the save was written")
    }

    func testTheSqliteShellAsTheOtherWriter() throws {
        let s = try makeSetup()
        let ghana = s.team("Ghana")
        ghana.qualifyingZone = "Atlantis"
        try sqlite(s.store, "UPDATE Team SET qualifyingZone = 'Lemuria' WHERE teamName = 'Ghana'")
        XCTAssertThrowsError(try s.context.save()) { error in
            XCTAssertEqual((error as? MergeConflictError)?.conflicts.first?.fields.first?.storeValue, .attribute(.string("Lemuria")))
        }
        // The dialog's "overwrite".
        try s.context.save(mergePolicy: .editWins)
        XCTAssertEqual(s.context.mergePolicy, .error, "one save's policy does not stay")
        XCTAssertEqual(try s.row("Ghana")?["qualifyingZone"], "Atlantis")
        XCTAssertFalse(s.context.hasChanges)
    }

    // MARK: Other policies

    func testStoreWinsTakesTheStoreValuesAndSavesTheOtherEdits() throws {
        let s = try makeSetup()
        let ghana = s.team("Ghana")
        let recorder = EventRecorder(s.context)
        let sibling = ObjectContext(store: s.store)
        let siblingGhana = try sibling.existingObject(with: ghana.objectID) as! Team
        let siblingRecorder = EventRecorder(sibling)
        ghana.wins = 4
        ghana.imageName = "edited"
        try s.otherTeam("Ghana").wins = 5
        try s.other.save()
        s.context.processPendingChanges()
        recorder.reset()

        try s.context.save(mergePolicy: .storeWins)
        XCTAssertEqual(try s.row("Ghana")?["wins"], 5)
        XCTAssertEqual(try s.row("Ghana")?["imageName"], "edited")
        XCTAssertFalse(s.context.hasChanges)
        XCTAssertEqual(ghana.wins, 5, "the object shows the store's value")
        XCTAssertEqual(ghana.committedValues(forKeys: ["wins", "imageName"])["wins"] as? Int, 5)
        XCTAssertEqual(recorder.saves, [ObjectChanges(updated: [ghana.objectID: ["imageName"]])])
        XCTAssertEqual(recorder.objectsDidChange, [ObjectChanges(updated: [ghana.objectID: ["wins"]])], "lists learn that wins changed")
        waitUntil { !siblingRecorder.objectsDidChange.isEmpty }
        XCTAssertEqual(siblingRecorder.objectsDidChange, [ObjectChanges(updated: [ghana.objectID: ["imageName", "wins"]])])
        XCTAssertEqual(siblingGhana.wins, 5)
        XCTAssertEqual(siblingGhana.imageName, "edited")
    }

    func testEditWinsWritesTheEditsOverTheStoreValues() throws {
        let s = try makeSetup()
        let ghana = s.team("Ghana")
        s.context.mergePolicy = .editWins
        ghana.wins = 4
        try s.otherTeam("Ghana").wins = 5
        try s.otherTeam("Ghana").imageName = nil
        try s.other.save()
        try s.context.save()
        XCTAssertEqual(try s.row("Ghana")?["wins"], 4)
        XCTAssertNil(try s.row("Ghana")?["imageName"] as String?, "a field the edit did not touch keeps the other change")
        XCTAssertEqual(ghana.wins, 4)
        XCTAssertNil(ghana.imageName, "the object took the other change of a field it did not edit")
    }

    func testFieldsChangedOnOneSideOnlyAllSurviveAndSameValuesAreNoConflict() throws {
        let s = try makeSetup()
        let ghana = s.team("Ghana"), chile = s.team("Chile")
        let recorder = EventRecorder(s.context)
        ghana.wins = 4
        chile.wins = 2
        try s.otherTeam("Ghana").imageName = "theirs"
        try s.otherTeam("Ghana").qualifyingZone = "Elsewhere"
        try s.otherTeam("Chile").wins = 2  // the same value on both sides
        try s.other.save()
        s.context.processPendingChanges()
        recorder.reset()

        try s.context.save()  // .error: nothing conflicts
        XCTAssertEqual(try s.row("Ghana")?["wins"], 4)
        XCTAssertEqual(try s.row("Ghana")?["imageName"], "theirs")
        XCTAssertEqual(try s.row("Ghana")?["qualifyingZone"], "Elsewhere")
        XCTAssertEqual(try s.row("Chile")?["wins"], 2)
        XCTAssertEqual(ghana.imageName, "theirs", "after the save the object holds what the store holds")
        XCTAssertEqual(ghana.qualifyingZone, "Elsewhere")
        XCTAssertEqual(recorder.objectsDidChange, [ObjectChanges(updated: [ghana.objectID: ["imageName", "qualifyingZone"]])],
                       "lists learn of the other process's values the save brought in")
    }

    // MARK: Deleted rows

    func testARowDeletedElsewhereFailsTheSaveUnlessTheStoreWins() throws {
        let s = try makeSetup()
        let ghana = s.team("Ghana"), japan = s.team("Japan")
        ghana.wins = 4
        japan.wins = 1
        try s.other.delete(s.otherTeam("Ghana"))
        try s.other.save()
        for policy in [MergePolicy.error, .editWins] {
            XCTAssertThrowsError(try s.context.save(mergePolicy: policy)) { error in
                guard let error = error as? MergeConflictError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.conflicts, [MergeConflict(objectID: ghana.objectID, kind: .deleted)])
                XCTAssertTrue(error.conflicts[0].isDeleted)
                XCTAssertEqual(error.description, "cannot save: \(ghana.objectID) was deleted elsewhere while it was being edited. An edit cannot bring back a deleted row: roll back or refresh to let the object go, or insert it again as a new object")
            }
            XCTAssertEqual(s.context.updatedObjects, [ghana, japan])
            XCTAssertEqual(try s.row("Japan")?["wins"], 0)
        }
        let recorder = EventRecorder(s.context)
        try s.context.save(mergePolicy: .storeWins)
        XCTAssertEqual(try s.row("Japan")?["wins"], 1, "the other edits are saved")
        XCTAssertNil(try s.row("Ghana"))
        XCTAssertNil(ghana.managedObjectContext, "the object was let go, as a merged delete does")
        XCTAssertTrue(ghana.isDeleted)
        XCTAssertFalse(s.context.hasChanges)
        XCTAssertThrowsError(try s.context.existingObject(with: ghana.objectID))
        XCTAssertEqual(recorder.saves, [ObjectChanges(updated: [japan.objectID: ["wins"]])])
        // The edits the refused saves did not tell of are told once saved, then what the save found.
        XCTAssertEqual(recorder.objectsDidChange, [ObjectChanges(updated: [japan.objectID: ["wins"]]), ObjectChanges(deleted: [ghana.objectID])])
    }

    // MARK: The base value

    func testTheBaseSurvivesAMergeFromFollowingTheStore() throws {
        let s = try makeSetup()
        let ghana = s.team("Ghana")
        let recorder = EventRecorder(s.context)
        let following = try s.context.followStore(interval: .milliseconds(20))
        ghana.wins = 4
        s.context.processPendingChanges()
        recorder.reset()
        try sqlite(s.store, "UPDATE Team SET wins = 5 WHERE teamName = 'Ghana'")
        waitUntil { !recorder.objectsDidChange.isEmpty }
        XCTAssertEqual(Set(try XCTUnwrap(recorder.objectsDidChange.first).updated.keys), [ghana.objectID], "the change was merged")
        XCTAssertEqual(ghana.wins, 4, "the edit stays on top")
        XCTAssertEqual(ghana.committedValues(forKeys: ["wins"])["wins"] as? Int, 5, "the saved value is the store's now")
        XCTAssertThrowsError(try s.context.save()) { error in
            XCTAssertEqual((error as? MergeConflictError)?.conflicts.first?.fields.first?.baseValue, .attribute(.integer(0)),
                           "the edit began from 0, before the merge")
        }
        // Setting the merged value is no change, so nothing conflicts any more.
        ghana.wins = 5
        XCTAssertFalse(s.context.hasChanges)
        ghana.wins = 6
        try s.context.save()
        XCTAssertEqual(try s.row("Ghana")?["wins"], 6)
        withExtendedLifetime(following) {}
    }

    func testRefreshMergingKeepsTheBaseRollbackAndRefreshWithoutMergingClearIt() throws {
        let s = try makeSetup()
        let ghana = s.team("Ghana")
        ghana.wins = 4
        try s.otherTeam("Ghana").wins = 5
        try s.other.save()
        s.context.refresh(ghana, mergeChanges: true)
        XCTAssertEqual(ghana.wins, 4)
        XCTAssertThrowsError(try s.context.save(), "refreshing with the edit on top keeps the base")

        s.context.rollback()
        s.context.refresh(ghana, mergeChanges: true)
        XCTAssertEqual(ghana.wins, 5)
        ghana.wins = 6
        try s.context.save()
        XCTAssertEqual(try s.row("Ghana")?["wins"], 6, "after a rollback, a new edit begins from the value it sees")

        ghana.wins = 7
        try s.otherTeam("Ghana").wins = 8
        try s.other.save(mergePolicy: .editWins)
        s.context.refresh(ghana, mergeChanges: false)
        XCTAssertEqual(ghana.wins, 8)
        ghana.wins = 9
        try s.context.save()
        XCTAssertEqual(try s.row("Ghana")?["wins"], 9)
    }

    func testAFetchWithPendingChangesChecksNothing() throws {
        let s = try makeSetup()
        let ghana = s.team("Ghana")
        ghana.wins = 40
        try s.otherTeam("Ghana").wins = 5
        try s.other.save()
        let token = try s.store.currentHistoryToken()
        let fetched = try s.context.fetch(FetchRequest<Team>(predicate: FetchPredicate(format: "wins >= 40")))
        XCTAssertEqual(fetched.map(\.objectID), [ghana.objectID], "the fetch sees the edit")
        XCTAssertEqual(try s.row("Ghana")?["wins"], 5, "and leaves the store as it was")
        XCTAssertEqual(try s.store.currentHistoryToken(), token)
        XCTAssertThrowsError(try s.context.save(), "the edit and its base are still there")
    }

    func testInsertedObjectsAndUnchangedOnesNeverConflict() throws {
        let s = try makeSetup()
        let added = try s.context.insert(Team.self)
        added.teamName = "Atlantis"
        added.qualifyingZone = "Oceania"
        try s.otherTeam("Ghana").wins = 5  // the context holds Ghana, unchanged
        try s.other.save()
        try s.context.save()
        XCTAssertEqual(try s.row("Atlantis")?["qualifyingZone"], "Oceania")
        XCTAssertEqual(try s.row("Ghana")?["wins"], 5)
    }

    // MARK: Random interleavings

    /// Two processes edit the same few teams and save under random policies; after every
    /// save the store holds what the policy promises, field by field.
    func testRandomInterleavingsKeepWhatEachPolicyPromises() throws {
        let seed = SeededGenerator.seed(fromEnvironment: "SEED")
        var random = SeededGenerator(seed: seed)
        let s = try makeSetup()
        let names = ["Ghana", "Chile", "Japan", "Brazil"]
        let keys = ["wins", "imageName", "qualifyingZone"]
        let choices: [String: [Value]] = [
            "wins": [.integer(0), .integer(1), .integer(2)],
            "imageName": [.null, .string("a"), .string("b")],
            "qualifyingZone": [.string("X"), .string("Y"), .string("Africa")],
        ]
        let sides = [s.context, s.other]
        let client = try DatabaseQueue(path: s.store.url!.path)
        func stored() throws -> [String: [String: Value]] {
            try client.read { db in
                var rows: [String: [String: Value]] = [:]
                let placeholders = names.map { _ in "?" }.joined(separator: ", ")
                for row in try Row.fetchAll(db, sql: "SELECT teamName, wins, imageName, qualifyingZone FROM Team WHERE teamName IN (\(placeholders))",
                                            arguments: StatementArguments(names)) {
                    rows[row["teamName"]] = [
                        "wins": Value(databaseValue: row["wins"], type: .integer),
                        "imageName": Value(databaseValue: row["imageName"], type: .string),
                        "qualifyingZone": Value(databaseValue: row["qualifyingZone"], type: .string),
                    ]
                }
                return rows
            }
        }
        // What the test expects each side to hold: its unsaved edits and the values they began from.
        var edits: [[String: [String: Value]]] = [[:], [:]]
        var bases: [[String: [String: Value]]] = [[:], [:]]
        var saves = [MergePolicy: Int]()
        var conflictsSeen = 0

        for step in 0..<600 {
            let side = Int.random(in: 0...1, using: &random)
            let context = sides[side]
            let name = names.randomElement(using: &random)!
            let team = try context.existingObject(with: s.team(name).objectID)
            let context_ = "seed \(seed), step \(step), side \(side)"
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                let key = keys.randomElement(using: &random)!
                let value = choices[key]!.randomElement(using: &random)!
                let saved = Value(team.committedValues(forKeys: [key])[key] ?? nil)!
                if edits[side][name]?[key] == nil { bases[side][name, default: [:]][key] = saved }
                try team.setValue(value.anyValue, forKey: key)
                if value == saved {
                    edits[side][name]?[key] = nil
                    bases[side][name]?[key] = nil
                } else {
                    edits[side][name, default: [:]][key] = value
                }
                XCTAssertEqual(team.changedValues().mapValues { Value($0)! }, edits[side][name] ?? [:], context_)
            case 6:
                context.refresh(team, mergeChanges: false)
                edits[side][name] = nil
                bases[side][name] = nil
            default:
                let policy = [MergePolicy.error, .storeWins, .editWins].randomElement(using: &random)!
                let before = try stored()
                var conflicting: [String: Set<String>] = [:]
                for (team, teamEdits) in edits[side] {
                    for (key, edit) in teamEdits where before[team]![key] != bases[side][team]![key] && before[team]![key] != edit {
                        conflicting[team, default: []].insert(key)
                    }
                }
                do {
                    try context.save(mergePolicy: policy)
                    XCTAssertTrue(policy != .error || conflicting.isEmpty, "\(context_): \(conflicting) should have failed the save")
                    saves[policy, default: 0] += 1
                } catch let error as MergeConflictError {
                    XCTAssertEqual(policy, .error, "\(context_): \(error)")
                    let reported = Dictionary(uniqueKeysWithValues: error.conflicts.map { conflict in
                        (names.first { s.team($0).objectID == conflict.objectID }!, Set(conflict.fields.map(\.key)))
                    })
                    XCTAssertEqual(reported, conflicting, context_)
                    XCTAssertEqual(try stored(), before, "\(context_): a refused save changed the store")
                    for name in names {
                        let team = try context.existingObject(with: s.team(name).objectID)
                        XCTAssertEqual(team.changedValues().mapValues { Value($0)! }, edits[side][name] ?? [:], "\(context_): a refused save lost edits")
                    }
                    conflictsSeen += 1
                    continue
                }
                var expected = before
                for (team, teamEdits) in edits[side] {
                    for (key, edit) in teamEdits where !(policy == .storeWins && conflicting[team]?.contains(key) == true) {
                        expected[team]![key] = edit
                    }
                }
                let after = try stored()
                XCTAssertEqual(after, expected, "\(context_): a save under \(policy)")
                for (name, teamEdits) in edits[side] where !teamEdits.isEmpty {
                    let team = try context.existingObject(with: s.team(name).objectID)
                    XCTAssertEqual(team.committedValues(forKeys: keys).mapValues { Value($0)! }, after[name], "\(context_): the saved snapshot is the store's")
                }
                XCTAssertFalse(context.hasChanges, context_)
                edits[side] = [:]
                bases[side] = [:]
            }
        }
        XCTAssertGreaterThan(conflictsSeen, 0, "seed \(seed): the interleavings should conflict now and then")
        XCTAssertEqual(saves.count, 3, "seed \(seed): every policy saved at least once")
    }
}
