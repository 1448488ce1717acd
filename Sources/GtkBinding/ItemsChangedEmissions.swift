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
/// Changes apart are announced together, with the rows between them, when nobody holds an
/// item among those rows or among the rows the emission removes: GTK 4.8's list view
/// updates every row widget it keeps at each emission, so a chunk of 1,000 new rows spread
/// through a million made 1,000 emissions and as many rounds of that work. GTK holds the
/// items of the rows it shows and of its selection; for a position among the removed
/// ones whose item it holds, it would look for that item among every added one, so such a
/// range is never joined.
struct Emissions {
    let emit: (Int, Int, Int) -> Void
    /// Whether an item is held in a range of positions of the list as last announced.
    let isHeld: (Range<Int>) -> Bool
    private var pending: (position: Int, removed: Int, added: Int)?

    init(emit: @escaping (Int, Int, Int) -> Void, isHeld: @escaping (Range<Int>) -> Bool) {
        self.emit = emit
        self.isHeld = isHeld
    }

    /// Records a change of the list as it is now (before the change is made).
    mutating func record(_ position: Int, removed: Int, added: Int) {
        guard removed > 0 || added > 0 else { return }
        if let p = pending {
            if position == p.position + p.added || (removed == 0 && (p.position...p.position + p.added).contains(position)) {
                // Right after (or inside) what the pending emission added.
                pending = (p.position, p.removed + removed, p.added + added)
                return
            }
            if position + removed == p.position {
                // Right before where the pending emission starts.
                pending = (position, p.removed + removed, p.added + added)
                return
            }
            // Apart: the rows between join the emission unless an item among them, or among
            // the rows removed, is held (positions as last announced: everything before the
            // pending emission is where it was, what follows it is shifted by its change).
            if position > p.position + p.added {
                let between = position - (p.position + p.added)
                if !isHeld(p.position ..< p.position + p.removed + between + removed) {
                    pending = (p.position, p.removed + between + removed, p.added + between + added)
                    return
                }
            } else if position + removed < p.position {
                let between = p.position - (position + removed)
                if !isHeld(position ..< position + removed + between + p.removed) {
                    pending = (position, removed + between + p.removed, added + between + p.added)
                    return
                }
            }
            flush()
        }
        pending = (position, removed, added)
    }

    mutating func flush() {
        guard let p = pending else { return }
        pending = nil
        emit(p.position, p.removed, p.added)
    }
}
