import Foundation
import ObjectStore
@testable import Sharing
import TestSupport
import XCTest

/// A desktop's own commits wake no round of its sharing engine; every other commit does.
final class QuietHistoryTests: XCTestCase {
    /// Generated runs of the store's history: other writers' commits, the engine's write
    /// transactions (told to it late and out of order, as tasks of an actor are), and pushes
    /// whose scans send everything up to a token. A commit of another writer that no push
    /// has sent always needs a round; once every write is told and a push sent all, none does.
    func testACommitThatNoPushSentAlwaysWakesARoundAndTheEnginesOwnNever() {
        let seed = UInt64(ProcessInfo.processInfo.environment["SEED"] ?? "") ?? 20261201
        print("QuietHistoryTests seed \(seed) (SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        for run in 0..<200 {
            var quiet = QuietHistory()
            var token: Int64 = Int64.random(in: 0...1_000, using: &random)
            // Entries of other writers not sent by a push yet; writes and scans not told yet.
            var unsent: [Int64] = []
            var untoldWrites: [(Int64, Int64)] = []
            var untoldScans: [(through: Int64, sends: [Int64])] = []
            for step in 0..<60 {
                switch Int.random(in: 0..<10, using: &random) {
                case 0, 1:
                    let count = Int64.random(in: 1...3, using: &random)
                    unsent += (token + 1)...(token + count)
                    token += count
                case 2, 3, 4:
                    let before = token
                    token += Int64.random(in: 0...4, using: &random)
                    untoldWrites.append((before, token))
                case 5:
                    // A scan reads everything up to now; it is told once its push ended.
                    untoldScans.append((token, unsent.filter { $0 <= token }))
                case 6, 7:
                    if !untoldWrites.isEmpty {
                        let (before, after) = untoldWrites.remove(at: Int.random(in: 0..<untoldWrites.count, using: &random))
                        quiet.wrote(from: before, to: after)
                    }
                default:
                    if !untoldScans.isEmpty {
                        let scan = untoldScans.removeFirst()
                        unsent.removeAll { scan.sends.contains($0) }
                        quiet.sent(through: scan.through)
                    }
                }
                if !unsent.isEmpty {
                    XCTAssertTrue(quiet.needsRound(at: token), "run \(run), step \(step): an entry of another writer, \(unsent), would wake no round (seed \(seed))")
                }
            }
            for (before, after) in untoldWrites { quiet.wrote(from: before, to: after) }
            for scan in untoldScans { quiet.sent(through: scan.through) }
            quiet.sent(through: token)
            XCTAssertFalse(quiet.needsRound(at: token), "run \(run): everything sent and the rest the engine's own, yet a round (seed \(seed))")
        }
    }

    /// A history that starts lower than one seen before is another store file: nothing of it
    /// is taken as quiet.
    func testAHistoryThatStartsAgainIsNotQuiet() {
        var quiet = QuietHistory()
        quiet.sent(through: 500)
        XCTAssertFalse(quiet.needsRound(at: 500))
        XCTAssertTrue(quiet.needsRound(at: 3))
        XCTAssertTrue(quiet.needsRound(at: 4))
    }

    /// A desktop following another's saves runs one round for each (woken by the server),
    /// not two: the page it takes in is its own commit, which wakes nothing.
    func testADesktopFollowingAnothersSavesRunsOneRoundForEach() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database)
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
            try await a.session.synchronize()
            try await b.session.synchronize()
            try await Task.sleep(for: .milliseconds(300))
            let before = await b.session.roundsRun()
            let saves = 20
            for index in 0..<saves {
                try a.insertBoard(String(format: "Board %02d", index))
                try await a.session.synchronize()
                try await eventually("B takes board \(index)") { try b.boardNames().count == index + 1 }
            }
            // Rounds woken by B's own last commits would come now.
            try await Task.sleep(for: .milliseconds(500))
            let rounds = await b.session.roundsRun() - before
            XCTAssertEqual(try b.boardNames().count, saves)
            XCTAssertGreaterThan(rounds, 0)
            // A's wake-up that comes while B's round already pulls its change runs one more
            // round, which finds nothing: a few of them on a busy machine (24 once, in a run
            // of every sharing test). B's own commits waking rounds would make about twice
            // as many rounds as saves.
            XCTAssertLessThanOrEqual(rounds, saves + saves / 2, "B ran \(rounds) rounds to follow \(saves) saves of A")
            await a.stop()
            await b.stop()
        }
    }
}
