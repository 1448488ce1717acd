import Foundation
import GRDB
import ObjectStore
import XCTest

/// A class no entity of the World Cup model names.
private final class Stadium: ManagedObject {}

final class ContextTests: XCTestCase {
    func testInsertingAClassTheModelDoesNotKnowThrowsAndChangesNothing() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.worldCupModel(), self))
        XCTAssertThrowsError(try context.insert(Stadium.self)) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("Stadium") && message.contains("Team"), message)
        }
        XCTAssertThrowsError(try Stadium(context: context))
        XCTAssertFalse(context.hasChanges, "nothing was inserted")
    }

    func testInsertSaveAndFetchInAnotherContext() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let context = ObjectContext(store: store)
        let team = try context.insert(Team.self)
        XCTAssertTrue(team.objectID.isTemporaryID)
        XCTAssertEqual(team.wins, 0, "inserted objects start with the default values")
        team.teamName = "Brazil"
        team.qualifyingZone = "South America"
        try context.save()
        XCTAssertFalse(team.objectID.isTemporaryID)
        XCTAssertFalse(context.hasChanges)

        let other = ObjectContext(store: store)
        let fetched = try other.existingObject(with: team.objectID)
        XCTAssertEqual(try fetched.value(forKey: "teamName") as? String, "Brazil")
        XCTAssertTrue(fetched is Team)
    }

    func testOneObjectPerRowAndFaultsLoadOnFirstAccess() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let teams = try Fixtures.insertTeams(into: ObjectContext(store: store))
        let context = ObjectContext(store: store)
        let fault = try context.object(with: teams[0].objectID)
        XCTAssertTrue(fault.isFault)
        XCTAssertTrue(try context.object(with: teams[0].objectID) === fault)
        XCTAssertEqual((fault as! Team).teamName, "Algeria")
        XCTAssertFalse(fault.isFault)
        let fetched = try context.fetch(FetchRequest<Team>(predicate: FetchPredicate(format: "teamName == %@", "Algeria")))
        XCTAssertTrue(fetched[0] === fault)
        XCTAssertThrowsError(try context.existingObject(with: ObjectID(string: "Team/999")!))
        XCTAssertThrowsError(try context.object(with: ObjectID(string: "Player/1")!))
    }

    func testChangeTrackingKeepsOldValuesUntilSave() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.worldCupModel(), self))
        let team = try Fixtures.insertTeams(into: context)[0]
        XCTAssertFalse(team.hasChanges)
        team.wins += 1
        team.wins += 1
        XCTAssertTrue(team.isUpdated)
        XCTAssertTrue(context.hasChanges)
        XCTAssertEqual(context.updatedObjects, [team])
        XCTAssertEqual(team.changedValues()["wins"] as? Int, 2)
        XCTAssertEqual(team.committedValues(forKeys: ["wins"])["wins"] as? Int, 0)
        team.wins = 0
        XCTAssertFalse(team.hasChanges, "setting the saved value back is no change")
        team.wins = 3
        try context.save()
        XCTAssertEqual(team.committedValues(forKeys: ["wins"])["wins"] as? Int, 3)
        XCTAssertFalse(context.hasChanges)
    }

    func testRollbackRestoresEverything() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.worldCupModel(), self))
        let teams = try Fixtures.insertTeams(into: context)
        teams[0].wins = 5
        try context.delete(teams[1])
        let added = try context.insert(Team.self)
        added.teamName = "Iceland"
        context.processPendingChanges()  // observers were told of the changes
        let recorder = EventRecorder(context)
        context.rollback()
        XCTAssertFalse(context.hasChanges)
        XCTAssertEqual(teams[0].wins, 0)
        XCTAssertFalse(teams[1].isDeleted)
        XCTAssertNil(added.managedObjectContext)
        XCTAssertEqual(try context.count(for: FetchRequest<Team>()), Fixtures.worldCupTeams.count)
        XCTAssertEqual(recorder.objectsDidChange, [ObjectChanges(inserted: [teams[1].objectID], updated: [teams[0].objectID: ["wins"]],
                                                                 deleted: [added.objectID])])
    }

    func testARollbackOfChangesObserversWereNotToldOfInsertsAndDeletesNothing() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.worldCupModel(), self))
        let teams = try Fixtures.insertTeams(into: context)
        let recorder = EventRecorder(context)
        try context.delete(teams[1])
        let added = try context.insert(Team.self)
        added.teamName = "Iceland"
        XCTAssertThrowsError(try context.save(), "refused: Iceland has no zone")
        context.rollback()
        RunLoop.main.run(until: Date().addingTimeInterval(0.05))  // the scheduled processing finds nothing
        XCTAssertFalse(teams[1].isDeleted)
        XCTAssertNil(added.managedObjectContext)
        XCTAssertEqual(recorder.objectsDidChange, [], "a refused save rolled back shows nothing: no rows in, then out")
        XCTAssertEqual(recorder.saves, [])
    }

    func testKeyValueAccessRefusesWrongTypesAndUnknownKeys() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.todoModel(), self))
        let item = try context.insert(entityName: "Item")
        try item.setValue("Buy milk", forKey: "name")
        try item.setValue(1, forKey: "done")
        XCTAssertEqual(try item.value(forKey: "done") as? Bool, true)
        XCTAssertThrowsError(try item.setValue("yes", forKey: "done")) { error in
            let error = error as? ContextError
            XCTAssertEqual(error?.kind, .wrongType)
            XCTAssertTrue("\(error.map { "\($0)" } ?? "")".contains("Item.done takes a bool"))
            // The fields a program reacts to, besides the message.
            XCTAssertEqual(error?.entity, "Item")
            XCTAssertEqual(error?.key, "done")
            XCTAssertEqual(error?.objectID, item.objectID)
        }
        XCTAssertThrowsError(try item.setValue(3, forKey: "priority")) { error in
            let error = error as? ContextError
            XCTAssertEqual(error?.kind, .unknownKey)
            XCTAssertEqual(error?.key, "priority")
            XCTAssertTrue("\(error.map { "\($0)" } ?? "")".contains("name, done, list, tag"))
        }
        XCTAssertThrowsError(try item.value(forKey: "priority"))
        XCTAssertThrowsError(try item.setValue(item, forKey: "list")) { error in
            XCTAssertTrue("\(error)".contains("takes List objects"))
        }
        XCTAssertEqual(try item.value(forKey: "name") as? String, "Buy milk", "a refused set changes nothing")
    }

    func testRelationshipsKeepTheirInverse() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.todoModel(), self))
        let groceries = try context.insert(entityName: "List")
        let chores = try context.insert(entityName: "List")
        let milk = try context.insert(entityName: "Item")
        let eggs = try context.insert(entityName: "Item")
        for (object, name) in [(groceries, "Groceries"), (chores, "Chores")] { try object.setValue(name, forKey: "title") }
        for (object, name) in [(milk, "Milk"), (eggs, "Eggs")] { try object.setValue(name, forKey: "name") }
        try milk.setValue(groceries, forKey: "list")
        try groceries.addObject(eggs, toRelationship: "items")
        XCTAssertEqual(try groceries.value(forKey: "items") as? [ManagedObject], [milk, eggs])
        try context.save()
        try chores.setValue([eggs], forKey: "items")
        XCTAssertTrue(try eggs.value(forKey: "list") as? ManagedObject === chores)
        XCTAssertEqual(try groceries.value(forKey: "items") as? [ManagedObject], [milk])
        try groceries.removeObject(milk, fromRelationship: "items")
        XCTAssertNil(try milk.value(forKey: "list"))
    }

    func testOneToOneRelationshipsThroughTypedProperties() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.banksModel(), self))
        let bank = try context.insert(FailedBankInfo.self)
        bank.name = "First Bank"; bank.city = "Austin"; bank.state = "TX"
        let details = try context.insert(FailedBankDetails.self)
        details.closeDate = Date(timeIntervalSince1970: 1_300_000_000)
        details.info = bank
        XCTAssertTrue(bank.details === details)
        try context.save()
        let other = ObjectContext(store: context.store)
        let reread = try other.existingObject(with: bank.objectID) as! FailedBankInfo
        XCTAssertEqual(reread.details?.closeDate, details.closeDate)
        // Cascade: deleting the bank deletes its details.
        try other.delete(reread)
        XCTAssertTrue(reread.details == nil || other.deletedObjects.count == 2)
        XCTAssertEqual(other.deletedObjects.count, 2)
        try other.save()
        XCTAssertEqual(try other.count(for: FetchRequest<FailedBankDetails>()), 0)
    }

    func testDeleteRules() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.todoModel(), self))
        let list = try context.insert(entityName: "List")
        try list.setValue("Groceries", forKey: "title")
        let tag = try context.insert(entityName: "Tag")
        try tag.setValue("urgent", forKey: "label")
        let items = try (0..<3).map { i -> ManagedObject in
            let item = try context.insert(entityName: "Item")
            try item.setValue("Item \(i)", forKey: "name")
            try item.setValue(list, forKey: "list")
            return item
        }
        try items[0].setValue(tag, forKey: "tag")
        try context.save()

        // Deny: a tag in use cannot be deleted; the failed save keeps the delete pending.
        try context.delete(tag)
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertTrue("\(error)".contains("\(tag.objectID).items"), "\(error)")
            XCTAssertTrue("\(error)".contains("1 related Item object"), "\(error)")
        }
        XCTAssertTrue(tag.isDeleted)
        try items[0].setValue(nil, forKey: "tag")
        try context.save()

        // Cascade: deleting the list deletes its items.
        try context.delete(list)
        XCTAssertTrue(items.allSatisfy(\.isDeleted))
        try context.save()
        XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")), 0)
    }

    func testNullifyClearsTheInverse() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.todoModel(), self))
        let tag = try context.insert(entityName: "Tag")
        try tag.setValue("home", forKey: "label")
        let item = try context.insert(entityName: "Item")
        try item.setValue("Paint", forKey: "name")
        try item.setValue(tag, forKey: "tag")
        try context.save()
        // Item.tag is nullify (default): deleting the item leaves the tag, without it.
        try context.delete(item)
        try context.save()
        XCTAssertEqual(try tag.value(forKey: "items") as? [ManagedObject], [])
    }

    func testValidationRefusesBadValuesAndKeepsTheChanges() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.todoModel(), self))
        let item = try context.insert(entityName: "Item")
        try item.setValue("   ", forKey: "name")
        XCTAssertThrowsError(try context.save()) { error in
            let failure = (error as? ValidationError)?.failures.first
            XCTAssertEqual(failure?.key, "name")
            XCTAssertEqual(failure?.message, "needs a name")
            XCTAssertEqual(failure?.objectID, item.objectID)
        }
        XCTAssertTrue(item.isInserted, "the failed save keeps the insert")
        try item.setValue("Call mum", forKey: "name")
        try context.save()
        XCTAssertEqual(try ObjectContext(store: context.store).count(for: FetchRequest<ManagedObject>(entityName: "Item")), 1)

        let teams = ObjectContext(store: try Fixtures.store(Fixtures.worldCupModel(), self))
        let team = try teams.insert(Team.self)
        team.wins = -1
        XCTAssertThrowsError(try teams.save()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("teamName: is required"), text)
            XCTAssertTrue(text.contains("qualifyingZone: is required"), text)
            XCTAssertTrue(text.contains("wins: must be at least 0 (is -1)"), text)
        }
        team.teamName = ""
        team.qualifyingZone = "Europe"
        team.wins = 1
        XCTAssertThrowsError(try teams.save()) { error in
            XCTAssertEqual((error as? ValidationError)?.failures.map(\.description), ["\(team.objectID).teamName: must not be empty"])
        }
    }

    func testASaveIsAllOrNothing() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        // Another SQLite client refuses one of the rows this save writes.
        try store.database.write { db in
            try db.execute(sql: "CREATE TRIGGER refuse BEFORE INSERT ON Team WHEN NEW.teamName = 'Atlantis' BEGIN SELECT RAISE(ABORT, 'no Atlantis'); END")
        }
        teams[0].wins = 7
        let first = try context.insert(Team.self)
        first.teamName = "Iceland"; first.qualifyingZone = "Europe"
        let second = try context.insert(Team.self)
        second.teamName = "Atlantis"; second.qualifyingZone = "Europe"
        XCTAssertThrowsError(try context.save())
        let fresh = ObjectContext(store: store)
        XCTAssertEqual(try fresh.count(for: FetchRequest<Team>()), Fixtures.worldCupTeams.count)
        XCTAssertEqual((try fresh.existingObject(with: teams[0].objectID) as! Team).wins, 0)
        XCTAssertTrue(context.hasChanges)
        XCTAssertEqual(teams[0].wins, 7)
        try context.delete(second)
        try context.save()
        XCTAssertEqual(try fresh.count(for: FetchRequest<Team>()), Fixtures.worldCupTeams.count + 1)
    }

    func testNotificationsReportChangesAndSaves() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.worldCupModel(), self))
        let teams = try Fixtures.insertTeams(into: context)
        let recorder = EventRecorder(context)
        teams[0].wins = 1
        teams[0].imageName = nil
        try context.delete(teams[1])
        let added = try context.insert(Team.self)
        added.teamName = "Iceland"; added.qualifyingZone = "Europe"
        context.processPendingChanges()
        let changes = try XCTUnwrap(recorder.objectsDidChange.first)
        XCTAssertEqual(changes.updated, [teams[0].objectID: ["wins", "imageName"]])
        XCTAssertEqual(changes.deleted, [teams[1].objectID])
        XCTAssertEqual(changes.inserted, [added.objectID])
        try context.save()
        let saved = try XCTUnwrap(recorder.saves.first)
        XCTAssertEqual(saved.inserted, [added.objectID])
        XCTAssertFalse(added.objectID.isTemporaryID)
        XCTAssertEqual(saved.updated, [teams[0].objectID: ["wins", "imageName"]])
        XCTAssertEqual(saved.deleted, [teams[1].objectID])
    }

    /// An object saved without its optional to-one set: the next save of another field posts
    /// that field only (once a spurious "list" update, a row bound again for nothing).
    func testASecondSaveReportsOnlyWhatItChanged() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.todoModel(), self))
        let milk = try context.insert(entityName: "Item")
        try milk.setValue("Milk", forKey: "name")
        try context.save()
        let recorder = EventRecorder(context)
        try milk.setValue("Oat milk", forKey: "name")
        try context.save()
        XCTAssertEqual(recorder.objectsDidChange.map(\.updated), [[milk.objectID: ["name"]]])
        XCTAssertEqual(recorder.saves.map(\.updated), [[milk.objectID: ["name"]]])
        XCTAssertNil(try milk.value(forKey: "list"))
    }

    /// Another context deletes a list that an unsaved change here points an item at: after
    /// the merge the item is in no list (not a key to a deleted row) and is reported as
    /// updated; its save writes NULL and keeps its other edits.
    func testAMergedDeleteClearsUnsavedReferencesToTheDeletedObject() throws {
        let store = try Fixtures.store(Fixtures.todoModel(), self)
        let context = ObjectContext(store: store)
        let groceries = try context.insert(entityName: "List")
        try groceries.setValue("Groceries", forKey: "title")
        let milk = try context.insert(entityName: "Item")
        try milk.setValue("Milk", forKey: "name")
        try context.save()

        try milk.setValue(groceries, forKey: "list")
        try milk.setValue("Oat milk", forKey: "name")
        let other = ObjectContext(store: store)
        other.automaticallyMergesChangesFromStore = false
        context.automaticallyMergesChangesFromStore = false
        try other.delete(other.existingObject(with: groceries.objectID))
        try other.save()
        let recorder = EventRecorder(context)
        context.mergeChanges(fromContextDidSave: ObjectChanges(deleted: [groceries.objectID]))

        XCTAssertNil(try milk.value(forKey: "list"))
        XCTAssertEqual(recorder.objectsDidChange.last?.updated[milk.objectID], ["list"])
        XCTAssertEqual(recorder.objectsDidChange.last?.deleted, [groceries.objectID])
        try context.save()
        let row = try store.database.read { db in try Row.fetchOne(db, sql: "SELECT name, list FROM Item") }
        XCTAssertEqual(row?["name"], "Oat milk")
        XCTAssertEqual(row?["list"], DatabaseValue.null)
    }

    func testASaveOnAnotherThreadIsMergedAndPosted() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let main = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: main)
        XCTAssertEqual(teams[0].wins, 0)
        let merged = expectation(description: "merged")
        var posted: [ObjectChanges] = []
        let token = main.addObserver { event in
            if case .objectsDidChange(let changes) = event, !changes.updated.isEmpty {
                posted.append(changes)
                merged.fulfill()
            }
        }
        let background = ObjectContext(store: store, queue: DispatchQueue(label: "background"))
        let id = teams[0].objectID
        let deletedID = teams[1].objectID
        background.perform {
            do {
                let team = try background.existingObject(with: id) as! Team
                team.wins = 9
                try background.delete(background.existingObject(with: deletedID))
                try background.save()
            } catch {
                XCTFail("\(error)")
            }
        }
        wait(for: [merged], timeout: 10)
        token.cancel()
        XCTAssertEqual(posted.first?.updated[id], ["wins"])
        XCTAssertEqual(posted.first?.deleted, [deletedID])
        XCTAssertEqual(teams[0].wins, 9, "the merged object reads the saved value")
        XCTAssertNil(teams[1].managedObjectContext)
        XCTAssertEqual(try main.count(for: FetchRequest<Team>()), Fixtures.worldCupTeams.count - 1)
    }

    func testAnObservationCancelledFromManyThreadsAtOnceStopsOnce() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.worldCupModel(), self))
        var events = 0
        let token = context.addObserver { _ in events += 1 }
        DispatchQueue.concurrentPerform(iterations: 64) { _ in token.cancel() }
        try Fixtures.insertTeams(into: context)
        XCTAssertEqual(events, 0, "cancelled: no event reaches the handler")
    }
}
