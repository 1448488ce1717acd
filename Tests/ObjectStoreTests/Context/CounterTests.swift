import Foundation
import GRDB
import ObjectStore
import XCTest

/// Counters (`merge: .add`): a change saves what it added, so concurrent changes from
/// several contexts and processes on one file add up, never conflict, and a save's
/// `minValue` is checked against the sum.
final class CounterTests: XCTestCase {
    final class Tally: ManagedObject {
        @Attribute(minLength: 1) var name: String
        @Attribute(default: 0, minValue: 0, merge: .add) var taps: Int
        @Attribute(default: 0, merge: .add) var score: Double
    }

    private var model: Model { get throws { try Model(classes: [Tally.self]) } }

    /// A store file with one tally, "Ghana", and `count` processes on it (stores of their
    /// own, which hear nothing of each other's saves by themselves), each with a context.
    private func processes(_ count: Int) throws -> [(store: PersistentStore, context: ObjectContext)] {
        let url = try temporaryFolder(self).appendingPathComponent("tallies.sqlite")
        let first = try PersistentStore(url: url, model: model)
        let context = ObjectContext(store: first)
        let tally = try context.insert(Tally.self)
        tally.name = "Ghana"
        try context.save()
        return try [(first, context)] + (1..<count).map { _ in
            let store = try PersistentStore(url: url, model: model)
            return (store, ObjectContext(store: store))
        }
    }

    private func tally(in context: ObjectContext) throws -> Tally {
        try XCTUnwrap(context.fetch(FetchRequest<Tally>()).first)
    }

    private func storedTaps(_ store: PersistentStore) throws -> Int {
        try DatabaseQueue(path: store.url!.path).read { db in try Int.fetchOne(db, sql: "SELECT taps FROM Tally") ?? -1 }
    }

    func testTwoProcessesTappingTheSameObjectBothCountWithoutAConflict() throws {
        let p = try processes(2)
        let mine = try tally(in: p[0].context), theirs = try tally(in: p[1].context)
        XCTAssertEqual(theirs.taps, 0, "both began from 0")
        mine.taps += 1
        try p[0].context.save()
        theirs.taps += 1           // still shows 1: it began from 0
        theirs.score += 2.5
        try p[1].context.save()    // under the default policy, .error: no conflict for a counter
        XCTAssertEqual(theirs.taps, 2, "after the save the object shows the sum the store holds")
        XCTAssertEqual(try storedTaps(p[0].store), 2)
        mine.taps += 1
        try p[0].context.save()
        XCTAssertEqual(mine.taps, 3)
        XCTAssertEqual(mine.score, 2.5, "the other process's add to the other counter shows once saved")
    }

    func testAValueSetIsSavedAsWhatItAdds() throws {
        let p = try processes(2)
        let mine = try tally(in: p[0].context), theirs = try tally(in: p[1].context)
        theirs.taps = 10
        try p[1].context.save()
        mine.taps = 3              // began from 0: adds 3
        try p[0].context.save()
        XCTAssertEqual(try storedTaps(p[0].store), 13)
        XCTAssertEqual(mine.taps, 13)
    }

    /// A tap that lands on the saved value another process left (reloaded by a refresh or
    /// a merge) still counts: the change is what was added since the value it started from.
    func testATapLandingOnAValueSavedElsewhereStillCounts() throws {
        let p = try processes(2)
        let mine = try tally(in: p[0].context), theirs = try tally(in: p[1].context)
        mine.taps = 5
        try p[0].context.save()
        p[1].context.refresh(theirs, mergeChanges: true)
        XCTAssertEqual(theirs.taps, 5)
        theirs.taps += 1           // unsaved: 5 → 6
        mine.taps += 2             // saved elsewhere: the store holds 7
        try p[0].context.save()
        p[1].context.refresh(theirs, mergeChanges: true)
        XCTAssertEqual(theirs.name, "Ghana")   // the saved values are loaded again: taps 7
        theirs.taps += 1           // 6 → 7, the saved value now: still two taps here
        try p[1].context.save()
        XCTAssertEqual(try storedTaps(p[0].store), 9, "5 + 2 elsewhere + 2 here")
        XCTAssertEqual(theirs.taps, 9)
    }

    /// A save that would take a counter below its `minValue` once added to the stored value
    /// is refused naming the attribute; nothing is written and every change is kept, so the
    /// rest of the save goes once the counter is put right.
    func testAMinValueIsCheckedAgainstTheSumAndTheRestOfTheSaveIsKept() throws {
        let p = try processes(2)
        let mine = try tally(in: p[0].context), theirs = try tally(in: p[1].context)
        mine.taps = 2
        try p[0].context.save()
        theirs.taps -= 1           // 0 - 1: seen from here it goes below 0, but the store holds 2
        try p[1].context.save()
        XCTAssertEqual(try storedTaps(p[0].store), 1)
        mine.taps -= 2             // began from 2, the store holds 1: 1 - 2 = -1
        mine.name = "Black Stars"
        let token = try p[0].store.currentHistoryToken()
        XCTAssertThrowsError(try p[0].context.save()) { error in
            let failure = (error as? ValidationError)?.failures.first
            XCTAssertEqual(failure?.key, "taps", "\(error)")
            XCTAssertEqual(failure?.message, "must be at least 0 (is -1) once added to the 1 saved elsewhere meanwhile")
        }
        XCTAssertEqual(try p[0].store.currentHistoryToken(), token, "nothing was written")
        XCTAssertTrue(p[0].context.hasChanges, "the changes stay")
        mine.taps += 1             // adds -1 now
        try p[0].context.save()
        XCTAssertEqual(try storedTaps(p[0].store), 0)
        XCTAssertEqual(mine.name, "Black Stars", "the rest of the save went too")
    }

    /// Seeded random taps (+1, sometimes -1, sometimes a save refused and rolled back) by
    /// four processes on one file, saved at random moments: the store ends at exactly the
    /// sum of the saved changes, and no save meets a conflict.
    func testRandomTapsFromFourProcessesAddUpExactly() throws {
        let seed = SeededGenerator.seed()
        print("CounterTests seed \(seed) (SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        let p = try processes(4)
        let tallies = try p.map { try tally(in: $0.context) }
        var saved = 0
        var unsaved = [Int](repeating: 0, count: p.count)
        for _ in 0..<400 {
            let i = Int(random.next() % UInt64(p.count))
            switch random.next() % 10 {
            case 0..<6:
                tallies[i].taps += 1
                unsaved[i] += 1
            case 6:
                tallies[i].taps -= 1
                unsaved[i] -= 1
            case 7:
                p[i].context.rollback()
                unsaved[i] = 0
            default:
                do {
                    try p[i].context.save()
                    saved += unsaved[i]
                    unsaved[i] = 0
                } catch let error as ValidationError {
                    // Below 0 once added: refused, and given up.
                    XCTAssertEqual(error.failures.map(\.key), ["taps"])
                    XCTAssertLessThan(try storedTaps(p[i].store) + unsaved[i], 0, "refused only when the sum is below 0")
                    p[i].context.rollback()
                    unsaved[i] = 0
                }
            }
        }
        for i in p.indices {
            do { try p[i].context.save(); saved += unsaved[i] } catch is ValidationError { p[i].context.rollback() }
        }
        XCTAssertEqual(try storedTaps(p[0].store), saved, "seed \(seed)")
    }

    /// A store made before wins were a counter opens with the counter model: only how
    /// changes merge differs, so nothing in the file changes but its recorded model.
    func testAStoreMadeBeforeTheAttributeWasACounterOpensWithItsObjects() throws {
        let url = try temporaryFolder(self).appendingPathComponent("old.sqlite")
        let plain = try Model(json: Data(#"{"entities":[{"name":"Team","attributes":[{"name":"wins","type":"integer","default":0}]}]}"#.utf8))
        do {
            let context = ObjectContext(store: try PersistentStore(url: url, model: plain))
            try context.insert(entityName: "Team").setValue(4, forKey: "wins")
            try context.save()
        }
        let counter = try Model(json: Data(#"{"entities":[{"name":"Team","attributes":[{"name":"wins","type":"integer","default":0,"merge":"add"}]}]}"#.utf8))
        let context = ObjectContext(store: try PersistentStore(url: url, model: counter))
        let team = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Team")).first)
        XCTAssertEqual(team.attributeValue(forKey: "wins"), .integer(4))
        try team.setValue(5, forKey: "wins")
        try context.save()
        XCTAssertEqual(team.attributeValue(forKey: "wins"), .integer(5))
    }

    func testAModelSaysWhereACounterIsNotANumber() throws {
        let json = #"{"entities":[{"name":"Team","attributes":[{"name":"name","type":"string","merge":"add"}]}]}"#
        XCTAssertThrowsError(try Model(json: Data(json.utf8))) { error in
            XCTAssertEqual("\(error)", #"model.json: Team.name: merge "add" makes a counter, which is a number: only integer and double attributes take it, not string"#)
        }
        let unknown = #"{"entities":[{"name":"Team","attributes":[{"name":"wins","type":"integer","merge":"max"}]}]}"#
        XCTAssertThrowsError(try Model(json: Data(unknown.utf8))) { error in
            XCTAssertTrue("\(error)".contains(#"unknown merge "max"; use "add" for a counter"#), "\(error)")
        }
        let counter = try Model(json: Data(#"{"entities":[{"name":"Team","attributes":[{"name":"wins","type":"integer","merge":"add"}]}]}"#.utf8))
        let plain = try Model(json: Data(#"{"entities":[{"name":"Team","attributes":[{"name":"wins","type":"integer"}]}]}"#.utf8))
        XCTAssertEqual(counter.entity(named: "Team")?.attribute(named: "wins")?.merge, .add)
        XCTAssertNotEqual(counter.fingerprint, plain.fingerprint)
        XCTAssertEqual(try Model(json: counter.jsonData()).fingerprint, counter.fingerprint, "written and read back")
    }
}
