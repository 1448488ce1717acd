import CAdw
import CGtk
import Foundation
import GtkBinding
import ObjectStore

/// Moving through the list with the keyboard: Up and Down, Page Up and Page Down, Home and
/// End move the selection from object to object, across section headers (GTK 4.8 stops on a
/// header, which cannot be selected, and Home lands on the first header).
///
/// Keys held down or pressed faster than the window draws do not queue up: each press moves
/// a target position, and the selection, the scrolling and the focus follow it once the
/// pending key presses are handled.
extension ViewerWindow {
    enum ListMove {
        case up, down, pageUp, pageDown, home, end

        init?(keyval: guint) {
            switch Int32(keyval) {
            case GDK_KEY_Up, GDK_KEY_KP_Up: self = .up
            case GDK_KEY_Down, GDK_KEY_KP_Down: self = .down
            case GDK_KEY_Page_Up, GDK_KEY_KP_Page_Up: self = .pageUp
            case GDK_KEY_Page_Down, GDK_KEY_KP_Page_Down: self = .pageDown
            case GDK_KEY_Home, GDK_KEY_KP_Home: self = .home
            case GDK_KEY_End, GDK_KEY_KP_End: self = .end
            default: return nil
            }
        }
    }

    /// Adds the list's key controller (capture phase) that moves the selection.
    func addListNavigation() {
        let controller = gtk_event_controller_key_new()!
        gtk_event_controller_set_propagation_phase(controller, GTK_PHASE_CAPTURE)
        Signal.connect(UnsafeMutableRawPointer(controller), "key-pressed") { [weak self] (keyval: guint, _: guint, state: GdkModifierType) -> Bool in
            guard let self, let move = ListMove(keyval: keyval),
                  state.rawValue & (GDK_CONTROL_MASK.rawValue | GDK_ALT_MASK.rawValue | GDK_SHIFT_MASK.rawValue) == 0 else { return false }
            return self.queue(move)
        }
        gtk_widget_add_controller(listView, controller)
    }

    /// Moves the target of the pending moves; returns false when there is nothing to move to.
    private func queue(_ move: ListMove) -> Bool {
        guard let session, session.rows.count > 0 else { return false }
        let start = pendingListPosition ?? session.selection.selectedPosition
        guard let target = position(after: move, from: start, in: session.rows) else { return true }
        let scheduled = pendingListPosition != nil
        pendingListPosition = target
        if !scheduled {
            // Below the input's priority: a burst of key presses is taken first, then one move.
            MainLoop.idle(priority: G_PRIORITY_DEFAULT_IDLE) { [weak self] in self?.applyPendingMove() }
        }
        return true
    }

    /// Selects the target of the pending moves now. A key that acts on the selection (Enter,
    /// Delete) calls it first: typed in the same burst as the arrows, it comes before their move.
    func applyPendingMove() {
        guard let position = pendingListPosition, let session else { return }
        pendingListPosition = nil
        guard let object = session.object(atPosition: position) else { return }
        let movesUp = session.selection.selectedPosition.map { position < $0 } ?? false
        session.selection.select(object)
        keepFocusOnSelection()
        revealSelection(headerAtOnce: movesUp)
    }

    /// The object position `move` leads to from `start` (nil: none selected); nil when there is none.
    private func position(after move: ListMove, from start: Int?, in rows: FetchedResultsListModel<ManagedObject>) -> Int? {
        let last = rows.count - 1
        func isObject(_ position: Int) -> Bool { rows.indexPath(at: position) != nil }
        /// The nearest object at `position` or beyond it in `direction`, within the list.
        func object(from position: Int, _ direction: Int) -> Int? {
            var p = position
            while (0...last).contains(p) {
                if isObject(p) { return p }
                p += direction
            }
            return nil
        }
        guard let start else { return object(from: 0, 1) }
        switch move {
        case .up: return object(from: start - 1, -1)
        case .down: return object(from: start + 1, 1)
        case .home: return object(from: 0, 1)
        case .end:
            // The list's last object: its position is announced to GTK first when a growth in
            // steps (a narrow search just cleared) has not reached it yet.
            let sections = rows.controller.sections ?? []
            guard let s = sections.lastIndex(where: { $0.numberOfObjects > 0 }) else { return nil }
            return rows.position(for: IndexPath(item: sections[s].numberOfObjects - 1, section: s))
        case .pageUp: return object(from: max(start - rowsPerPage, 0), 1).flatMap { $0 < start ? $0 : nil } ?? object(from: start - 1, -1)
        case .pageDown: return object(from: min(start + rowsPerPage, last), -1).flatMap { $0 > start ? $0 : nil } ?? object(from: start + 1, 1)
        }
    }

    /// How many rows a page moves: the rows the list shows at once, less one kept in view.
    private var rowsPerPage: Int {
        let rowHeight = session?.selection.selectedObject.flatMap { factory?.rowWidget(showing: $0.objectID) }
            .map { Int(gtk_widget_get_height($0)) } ?? 0
        return max(1, Int(gtk_widget_get_height(listView)) / max(rowHeight, 40) - 1)
    }
}
