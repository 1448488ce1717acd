@testable import GtkBinding
import XCTest

/// Random emissions of a list, told to GTK through `ListGrowth` with turns (batches and
/// steps) between them: after every emission GTK's list, replayed from what it was told, is
/// the first `announced` items of the list; a turn never takes a short list more than a
/// step further; and the steps end with every item announced. No display needed.
final class ListGrowthTests: XCTestCase {
    func testGTKAlwaysHoldsAPrefixAndAShortListGrowsAStepATurn() {
        let seed = SeededGenerator.seed()
        print("seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        var next = 0
        func newItems(_ n: Int) -> [Int] { defer { next += n }; return Array(next..<next + n) }

        for run in 0..<200 {
            var list = newItems(Int.random(in: 0..<300, using: &rng))
            var growth = ListGrowth(count: list.count)
            var told = list
            for turn in 0..<30 {
                let stepping = Bool.random(using: &rng) && growth.isGrowing
                let before = growth.announced
                let context = "seed \(seed) run \(run) turn \(turn)"
                func tell(_ emission: (position: Int, removed: Int, added: Int)?) {
                    guard let e = emission else { return }
                    XCTAssertLessThanOrEqual(e.position + e.removed, told.count, "\(context): the emission removes past GTK's list")
                    told.replaceSubrange(e.position..<e.position + e.removed, with: list[e.position..<e.position + e.added])
                }
                if stepping {
                    tell(growth.nextStep())
                } else {
                    growth.startTurn()
                    for _ in 0..<Int.random(in: 1...6, using: &rng) {
                        // Mostly small changes, sometimes thousands of items (a join, a search cleared).
                        let position = Int.random(in: 0...list.count, using: &rng)
                        let removed = Int.random(in: 0...min(list.count - position, Bool.random(using: &rng) ? 3 : list.count), using: &rng)
                        let added = Int.random(in: 0...(Int.random(in: 0..<5, using: &rng) == 0 ? 3_000 : 4), using: &rng)
                        list.replaceSubrange(position..<position + removed, with: newItems(added))
                        tell(growth.emission(position, removed: removed, added: added))
                        XCTAssertEqual(told, Array(list.prefix(growth.announced)), "\(context): GTK's list is not the list's first items")
                        XCTAssertEqual(growth.total, list.count, context)
                    }
                }
                XCTAssertEqual(told, Array(list.prefix(growth.announced)), "\(context): GTK's list is not the list's first items")
                if before < ListGrowth.widgetBound {
                    XCTAssertLessThanOrEqual(growth.announced, max(before, ListGrowth.step) + ListGrowth.step,
                                             "\(context): a turn took a short list (\(before) items) too far")
                }
            }
            // The steps end with every item announced, and a list past the bound takes the rest at once.
            var steps = 0
            while let step = growth.nextStep() {
                told.replaceSubrange(step.position..<step.position + step.removed, with: list[step.position..<step.position + step.added])
                steps += 1
                XCTAssertLessThan(steps, ListGrowth.widgetBound / ListGrowth.step + 2, "seed \(seed) run \(run): too many steps")
            }
            XCTAssertEqual(told, list, "seed \(seed) run \(run): the steps end with GTK holding the list")
        }
    }
}
