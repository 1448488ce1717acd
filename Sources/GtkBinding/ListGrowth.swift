/// How a short list that grows a lot reaches GTK: a few dozen items a turn of the main loop.
///
/// GTK 4.8's list view makes a row widget for each item around its anchor, up to 200
/// (`GTK_LIST_VIEW_MAX_LIST_ITEMS`), during the items-changed emission that tells it of
/// them, and measures them all in the next frame. A list of a few dozen rows that becomes
/// thousands (a desktop joining a shared list, a narrow search cleared) made about 200 row
/// widgets in one turn and measured them in the next: two stalls of 100–200 ms each. Once
/// GTK knows 200 items, more make no new row widgets.
///
/// So GTK's list is always the first ``announced`` items of the list (the flattened
/// sections), and each emission of the list is told to GTK as the emission of that prefix.
/// While GTK knows fewer than ``widgetBound`` items, a turn (a batch, or a step) may take
/// it at most ``step`` items further; the items left are announced one step a turn at the
/// prefix's end, and once GTK knows ``widgetBound`` items, the rest in one emission.
///
/// Positions below ``announced`` mean the same in the list and in GTK's list.
struct ListGrowth {
    /// An items-changed emission: at `position`, `removed` items replaced by `added`.
    typealias Emission = (position: Int, removed: Int, added: Int)

    /// The most items a turn adds to what GTK knows while it knows fewer than ``widgetBound``.
    static let step = 32
    /// Past GTK's 200 row widgets and the two it keeps beyond each of its trackers (anchor,
    /// focus, selection): growth past it makes none.
    static let widgetBound = 224

    /// The items GTK was told of: the first `announced` of the list.
    private(set) var announced: Int
    /// The items of the list.
    private(set) var total: Int
    /// The most items GTK may know until the turn ends; nil: every item.
    private var ceiling: Int?

    init(count: Int) {
        announced = count
        total = count
    }

    /// Whether items at the list's end are not announced yet.
    var isGrowing: Bool { announced < total }

    /// The most items GTK may know by the end of a turn that starts now: a step beyond what
    /// it knows (at least two steps); nil once it knows ``widgetBound`` items.
    private var turnCeiling: Int? {
        announced < Self.widgetBound ? max(announced, Self.step) + Self.step : nil
    }

    /// Starts a turn (a batch, or a step): how far GTK's list may grow in it.
    mutating func startTurn() { ceiling = turnCeiling }

    /// Whether a turn that ends with `newCount` items in the list cannot tell GTK of them
    /// all: GTK knows fewer than ``widgetBound`` items, and either not all of them yet, or
    /// `newCount` is more than a step beyond them.
    func outgrowsTurn(newCount: Int) -> Bool {
        guard let turnCeiling else { return false }
        return isGrowing || newCount > turnCeiling
    }

    /// What GTK is told of `position, removed, added`, an emission of the whole list (its
    /// positions as the list is before it); nil when GTK's list does not change.
    mutating func emission(_ position: Int, removed: Int, added: Int) -> Emission? {
        let newTotal = total - removed + added
        total = newTotal
        let limit = min(newTotal, ceiling ?? .max)
        if position >= announced {
            // GTK's items are all before the change: the same items follow, and the end may
            // be announced up to the limit.
            guard limit > announced else { return nil }
            defer { announced = limit }
            return (announced, 0, limit - announced)
        }
        if position + removed <= announced, announced - removed + added <= ceiling ?? .max {
            // Within GTK's list and within the limit: as it is.
            announced += added - removed
            return (position, removed, added)
        }
        // GTK's items from `position` on are replaced by what follows there now, up to the limit.
        defer { announced = limit }
        return (position, announced - position, limit - position)
    }

    /// The next step's emission (a turn of its own), at the end of GTK's list, or with
    /// `all` every item left and no limit until the next turn; nil when every item is
    /// announced.
    mutating func nextStep(all: Bool = false) -> Emission? {
        if all { ceiling = nil }
        guard isGrowing else { return nil }
        if !all { startTurn() }
        let limit = min(total, ceiling ?? .max)
        defer { announced = limit }
        return (announced, 0, limit - announced)
    }
}
