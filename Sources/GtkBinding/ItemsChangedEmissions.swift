import FetchedResults
import Foundation
import ObjectStore

/// The items a list hands out and that are still held (by GTK: the rows its list view
/// keeps, its selection), for a reload that keeps them: see `FlattenedSections.apply`.
struct HeldItems {
    /// The positions of the items held, ascending, as GTK last heard.
    let positions: () -> [Int]
    /// Gives the items held in a range of positions what the list shows there now.
    let reassign: (Range<Int>) -> Void
    /// Announces a range of positions replaced by the same items (their contents changed
    /// in place): items-changed(start, count, count), the items still held.
    let announceReplaced: (Range<Int>) -> Void
}

/// Coalesces changes into few items-changed emissions.
///
/// Each change is recorded just before the list is changed; one that does not extend the
/// pending emission first announces the pending one, while the list still is in the state
/// that emission describes.
///
/// Changes apart are announced together, with the rows between them: GTK 4.8's list view
/// updates every row widget it keeps (about 200) at each emission, unbinding and binding
/// each row after the change, so a chunk of 1,000 new rows spread through a million made
/// 1,000 emissions and as many rounds of that work, and a joining desktop's page of 5,000
/// rows spread through the rows shown made about 50 emissions and 5,000 binds.
///
/// Where nobody holds an item among the rows between or removed, they are joined whatever
/// their number. Where GTK holds some (the rows it keeps, its selection), they are joined
/// only while the emission stays within ``joinedAcrossHeldItems`` rows removed and added,
/// and `mayJoinAcrossHeld(range)` allows it: GTK then releases those rows' widgets, asks
/// for the item of every added position, and takes each widget back where its item is
/// again (`follow` is told of each change on its own, so that the rows between keep their
/// items: see `ListItems`). That asking is why a long range with a held item is never
/// joined: a million-row emission would make a million items. And GTK keeps a row still on screen (its
/// anchor) only while no emission removes it: `mayJoinAcrossHeld` is false there (the
/// ``ListAnchor`` says where), and everywhere unless a ``ListAnchor`` follows the list.
struct Emissions {
    /// The most rows an emission that joins changes across held items removes, and adds.
    static let joinedAcrossHeldItems = 1_000

    /// Told of each change on its own, in order, each at a position of the list as the
    /// change before left it, just before the emission that holds it.
    let follow: (Int, Int, Int) -> Void
    /// Announces an emission (items-changed), once `follow` has been told of its changes.
    let announce: (Int, Int, Int) -> Void
    /// Whether an item is held in a range of positions of the list as last announced.
    let isHeld: (Range<Int>) -> Bool
    /// Whether a short emission may join changes across the items held in a range of
    /// positions of the list as last announced.
    let mayJoinAcrossHeld: (Range<Int>) -> Bool
    private var pending: (position: Int, removed: Int, added: Int)?
    private var parts: [(position: Int, removed: Int, added: Int)] = []

    init(follow: @escaping (Int, Int, Int) -> Void, announce: @escaping (Int, Int, Int) -> Void,
         isHeld: @escaping (Range<Int>) -> Bool, mayJoinAcrossHeld: @escaping (Range<Int>) -> Bool = { _ in false }) {
        self.follow = follow
        self.announce = announce
        self.isHeld = isHeld
        self.mayJoinAcrossHeld = mayJoinAcrossHeld
    }

    /// Announces one change on its own (the pending emission must have been flushed).
    func emit(_ position: Int, _ removed: Int, _ added: Int) {
        follow(position, removed, added)
        announce(position, removed, added)
    }

    /// Records a change of the list as it is now (before the change is made).
    mutating func record(_ position: Int, removed: Int, added: Int) {
        guard removed > 0 || added > 0 else { return }
        if let p = pending {
            if let joined = joining(p, (position, removed, added)) {
                pending = joined
                parts.append((position, removed, added))
                return
            }
            flush()
        }
        pending = (position, removed, added)
        parts = [(position, removed, added)]
    }

    /// The emission that announces `p` and `change` together, or nil when they stay apart.
    private func joining(_ p: (position: Int, removed: Int, added: Int),
                         _ change: (position: Int, removed: Int, added: Int)) -> (position: Int, removed: Int, added: Int)? {
        let (position, removed, added) = change
        if position == p.position + p.added || (removed == 0 && (p.position...p.position + p.added).contains(position)) {
            // Right after (or inside) what the pending emission added.
            return (p.position, p.removed + removed, p.added + added)
        }
        if position + removed == p.position {
            // Right before where the pending emission starts.
            return (position, p.removed + removed, p.added + added)
        }
        // Apart: the rows between join the emission (positions as last announced: everything
        // before the pending emission is where it was, what follows it is shifted by its change).
        let joined: (position: Int, removed: Int, added: Int), announcedRange: Range<Int>
        if position > p.position + p.added {
            let between = position - (p.position + p.added)
            joined = (p.position, p.removed + between + removed, p.added + between + added)
            announcedRange = p.position ..< p.position + joined.removed
        } else if position + removed < p.position {
            let between = p.position - (position + removed)
            joined = (position, removed + between + p.removed, added + between + p.added)
            announcedRange = position ..< position + joined.removed
        } else {
            return nil
        }
        let short = joined.removed <= Self.joinedAcrossHeldItems && joined.added <= Self.joinedAcrossHeldItems
        return !isHeld(announcedRange) || (short && mayJoinAcrossHeld(announcedRange)) ? joined : nil
    }

    mutating func flush() {
        guard let p = pending else { return }
        pending = nil
        for part in parts { follow(part.position, part.removed, part.added) }
        parts = []
        announce(p.position, p.removed, p.added)
    }
}
