import CFetchedResultsModel
import CGtk

/// The items of a ``FetchedResultsListModel``'s GListModel: made from the flattened sections
/// when GTK asks for a position, and the same `FrRow` again for as long as GTK holds it and
/// no items-changed emission announced its position.
///
/// After an insertion, GTK 4.8 asks again for the item of every position after it among the
/// ~200 rows it keeps around the visible ones, and unbinds and binds each of those rows. With
/// the same `FrRow` for a row that did not change, a factory can tell that it shows that item
/// already and skip the work (``ListItemFactory`` does). An announced position (removed, added,
/// replaced) is forgotten, so its next item is a new `FrRow`, which a factory shows anew;
/// except in a reload, which gives the held items new contents in place (a new revision)
/// and announces them replaced by themselves, so that GTK keeps their row widgets.
///
/// The items are held weakly (GObject weak references): GTK decides how long they live.
final class ListItems {
    let flattened: FlattenedSections
    /// How much of the list GTK knows: its first `growth.announced` items.
    var growth: ListGrowth
    /// The items handed out that are still alive, by position now, ascending.
    private var live: [(position: Int, item: UnsafeMutablePointer<GObject>)] = []

    init(flattened: FlattenedSections) {
        self.flattened = flattened
        growth = ListGrowth(count: flattened.count)
    }

    deinit {
        for entry in live { g_object_weak_unref(entry.item, Self.itemFinalized, Unmanaged.passUnretained(self).toOpaque()) }
    }

    /// A new reference to the item at `position`; nil past the end of what GTK knows.
    func item(at position: Int) -> OpaquePointer? {
        guard position < growth.announced else { return nil }
        let index = firstIndex(atOrAfter: position)
        if index < live.count && live[index].position == position {
            return OpaquePointer(g_object_ref(live[index].item))
        }
        guard let content = flattened.content(at: position) else { return nil }
        flattened.recordItemMade()
        let row: OpaquePointer
        switch content {
        case .header(let name): row = fr_row_new_header(name)
        case .object(let key): row = fr_row_new_object(gint64(key))
        }
        let object = fr_cast_object(UnsafeMutableRawPointer(row))!
        g_object_weak_ref(object, Self.itemFinalized, Unmanaged.passUnretained(self).toOpaque())
        live.insert((position, object), at: index)
        return row
    }

    /// Follows an items-changed emission, before it is emitted: the items of the removed
    /// positions are forgotten, those after them move.
    func itemsChanged(position: Int, removed: Int, added: Int) {
        let start = firstIndex(atOrAfter: position)
        guard start < live.count else { return }
        let end = firstIndex(atOrAfter: position + removed)
        for entry in live[start..<end] { forget(entry.item) }
        live.removeSubrange(start..<end)
        for index in start..<live.count { live[index].position += added - removed }
    }

    /// The positions whose items are still held, ascending.
    var heldPositions: [Int] { live.map(\.position) }

    /// Gives the held items in `range` what the list shows at their positions now (each
    /// item's revision goes up, also when its contents stay: a reload may follow changes of
    /// the objects' values).
    func reassignHeldItems(in range: Range<Int>) {
        let start = firstIndex(atOrAfter: range.lowerBound), end = firstIndex(atOrAfter: range.upperBound)
        for entry in live[start..<end] {
            let row = OpaquePointer(entry.item)
            switch flattened.content(at: entry.position) {
            case .header(let name)?: fr_row_set_header(row, name)
            case .object(let key)?: fr_row_set_object(row, gint64(key))
            case nil: break
            }
        }
    }

    /// Whether an item handed out for a position in `range` is still held (by GTK: the rows
    /// it shows, its selection).
    func holdsItem(in range: Range<Int>) -> Bool {
        let index = firstIndex(atOrAfter: range.lowerBound)
        return index < live.count && live[index].position < range.upperBound
    }

    private func forget(_ item: UnsafeMutablePointer<GObject>) {
        g_object_weak_unref(item, Self.itemFinalized, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The index in `live` of the first entry at `position` or after it.
    private func firstIndex(atOrAfter position: Int) -> Int {
        var low = 0, high = live.count
        while low < high {
            let mid = (low + high) / 2
            if live[mid].position < position { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private static let itemFinalized: GWeakNotify = { data, item in
        let items = Unmanaged<ListItems>.fromOpaque(data!).takeUnretainedValue()
        items.live.removeAll { $0.item == item }
    }
}
